/**
 * Verified keys by digest, so a known key costs no store read on the hot path. An entry is
 * trusted for at most `ttlMs` (≤ 5 s: the revocation bound); cross-process change signals
 * (store/authChanges.ts) clear it sooner. Unknown digests are cached too (bounded), so junk
 * tokens cost one indexed lookup each, not one per request.
 *
 * Apart from the answers, the cache remembers which digests its last lookup found to be usable
 * keys, through expiry and clearing: an address over its budget for junk is refused before any
 * lookup, except for these (decisions.md, Hardening). Telling them apart costs no store read, and
 * a remembered key is still verified as usual; a lookup that finds it no longer usable forgets it.
 */
import type { ApiKey } from '../store/apiKeys.js';
import type { Organization } from '../store/organizations.js';

export interface KeyRecord {
  key: ApiKey;
  organization: Organization;
}

interface Entry {
  record: KeyRecord | null;
  fetchedAt: number;
}

export class KeyCache {
  private entries = new Map<string, Entry>();
  /** Store reads under way, by digest (see `joinRead`). */
  private readonly reads = new Map<string, Promise<KeyRecord | null>>();
  /**
   * Advanced by `clear()`. A read started before a clear may have seen the key before the change
   * that cleared it: its answer goes to the requests that waited for it, never into the cache.
   */
  private clears = 0;
  /** Digests last found to be active keys, oldest first. */
  private readonly live = new Set<string>();
  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 50_000,
  ) {}

  /** `undefined`: not cached (or stale); `null`: cached as unknown. */
  get(digest: string, now: number): KeyRecord | null | undefined {
    const entry = this.entries.get(digest);
    if (!entry) return undefined;
    if (now - entry.fetchedAt >= this.ttlMs) {
      this.entries.delete(digest);
      return undefined;
    }
    return entry.record;
  }

  /** What `set` needs to know of a read: when it started, in clears (see `clears`). */
  get generation(): number {
    return this.clears;
  }

  /**
   * Keeps a read's answer, unless the cache was cleared since the read started (`readIn`, the
   * `generation` then): such an answer may only make the key known as not live.
   */
  set(digest: string, record: KeyRecord | null, fetchedAt: number, readIn: number): void {
    if (readIn !== this.clears) {
      if (record?.key.state !== 'active') this.live.delete(digest);
      return;
    }
    this.live.delete(digest);
    if (record?.key.state === 'active') {
      dropOldestEighth(this.live, this.maxEntries);
      this.live.add(digest);
    }
    if (this.ttlMs <= 0) return;
    dropOldestEighth(this.entries, this.maxEntries);
    this.entries.set(digest, { record, fetchedAt });
  }

  /** Whether the last lookup of this digest found an active key (whether or not still cached). */
  isKnownLive(digest: string): boolean {
    return this.live.has(digest);
  }

  /**
   * The store read of `digest` already under way, for a request that missed the cache meanwhile
   * to wait for instead of reading again: when an entry expires, every request in flight with
   * that key misses it at once, and each read the same row (on PostgreSQL a round trip each; on
   * SQLite a read usually ends within the turn that starts it, so joins are rare there). A joined
   * answer began its read before the
   * request came, by less than one read's time (a cached answer may be `ttlMs` old). Not with the
   * cache off (`ttlMs` 0), where every request is to read the store itself.
   */
  joinRead(digest: string): Promise<KeyRecord | null> | undefined {
    return this.reads.get(digest);
  }

  /** Notes `read` as the one under way for `digest` until it settles; returns it. */
  startRead(digest: string, read: Promise<KeyRecord | null>): Promise<KeyRecord | null> {
    if (this.ttlMs <= 0) return read;
    this.reads.set(digest, read);
    const settled = () => {
      if (this.reads.get(digest) === read) this.reads.delete(digest);
    };
    read.then(settled, settled);
    return read;
  }

  /**
   * Forgets every answer and every read under way: the next request for any key reads afresh, and
   * reads under way keep their answers out of the cache.
   */
  clear(): void {
    this.entries.clear();
    this.reads.clear();
    this.clears++;
  }

  get size(): number {
    return this.entries.size;
  }
}

/** Maps and sets iterate in insertion order: at the bound, drop the oldest eighth at once. */
function dropOldestEighth(collection: Map<string, unknown> | Set<string>, maxEntries: number): void {
  if (collection.size < maxEntries) return;
  let drop = Math.ceil(maxEntries / 8);
  for (const key of collection.keys()) {
    collection.delete(key);
    if (--drop === 0) break;
  }
}

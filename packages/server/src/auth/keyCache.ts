/**
 * Verified keys by digest, so a known key costs no store read on the hot path. An entry is
 * trusted for at most `ttlMs` (≤ 5 s: the revocation bound); cross-process change signals
 * (store/authChanges.ts) clear it sooner. Unknown digests are cached too (bounded), so junk
 * tokens cost one indexed lookup each, not one per request.
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

  set(digest: string, record: KeyRecord | null, fetchedAt: number): void {
    if (this.ttlMs <= 0) return;
    if (this.entries.size >= this.maxEntries) {
      // Map iteration is insertion order: drop the oldest eighth rather than one at a time.
      let drop = Math.ceil(this.maxEntries / 8);
      for (const key of this.entries.keys()) {
        this.entries.delete(key);
        if (--drop === 0) break;
      }
    }
    this.entries.set(digest, { record, fetchedAt });
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

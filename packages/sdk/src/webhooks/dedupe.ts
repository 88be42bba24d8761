/**
 * Deduplication of business work by event id. Delivery is at least once: the same event can
 * arrive again (retries after a lost 2xx, operator redelivery), always with the same event id
 * and possibly a different timestamp and signature. Never dedupe by the delivery id.
 */

/** Where claims live. Implement it over Redis (SET NX PX), a SQL unique key, etc. */
export interface DedupeStore {
  /**
   * Atomically records `eventId` unless already recorded and not expired. Returns true when
   * this caller won the claim and must do the work; false for a duplicate.
   */
  claim(eventId: string, ttlMs: number): Promise<boolean> | boolean;
  /** Forgets a claim, so a redelivery of the event is processed (the work failed). */
  release(eventId: string): Promise<void> | void;
}

export interface MemoryDedupeStoreOptions {
  /** Most claims kept; the oldest are dropped first. Default 100,000. */
  maxEntries?: number;
  now?: () => number;
}

/**
 * A process-local store with TTL. Good for one receiver process and for tests; with several
 * processes or restarts, use a shared store so a redelivery to another process is caught.
 */
export class MemoryDedupeStore implements DedupeStore {
  // Insertion order is expiry order for a fixed TTL, which makes sweeping cheap.
  readonly #expiries = new Map<string, number>();
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(options: MemoryDedupeStoreOptions = {}) {
    this.#maxEntries = options.maxEntries ?? 100_000;
    this.#now = options.now ?? Date.now;
  }

  claim(eventId: string, ttlMs: number): boolean {
    const now = this.#now();
    this.#sweep(now);
    const expiry = this.#expiries.get(eventId);
    if (expiry !== undefined && expiry > now) return false;
    this.#expiries.delete(eventId);
    this.#expiries.set(eventId, now + ttlMs);
    while (this.#expiries.size > this.#maxEntries) {
      const oldest = this.#expiries.keys().next().value as string;
      this.#expiries.delete(oldest);
    }
    return true;
  }

  release(eventId: string): void {
    this.#expiries.delete(eventId);
  }

  get size(): number {
    return this.#expiries.size;
  }

  #sweep(now: number): void {
    for (const [id, expiry] of this.#expiries) {
      if (expiry > now) break;
      this.#expiries.delete(id);
    }
  }
}

export interface DeduplicatorOptions {
  store?: DedupeStore;
  /**
   * How long an event id is remembered. Default 72 hours: longer than the service's retry
   * schedule (about 27.6 hours), with room for an operator's redelivery the next day.
   */
  ttlMs?: number;
}

export type DedupeOutcome<T> = { duplicate: true } | { duplicate: false; result: T };

export class WebhookDeduplicator {
  readonly #store: DedupeStore;
  readonly #ttlMs: number;

  constructor(options: DeduplicatorOptions = {}) {
    this.#store = options.store ?? new MemoryDedupeStore();
    this.#ttlMs = options.ttlMs ?? 72 * 3_600_000;
  }

  /**
   * Runs `work` once per event id. A duplicate is skipped; when `work` throws, the claim is
   * released (so a later redelivery can try again) and the error is rethrown.
   */
  async once<T>(eventId: string, work: () => Promise<T> | T): Promise<DedupeOutcome<T>> {
    if (!(await this.#store.claim(eventId, this.#ttlMs))) return { duplicate: true };
    try {
      return { duplicate: false, result: await work() };
    } catch (error) {
      await this.#store.release(eventId);
      throw error;
    }
  }
}

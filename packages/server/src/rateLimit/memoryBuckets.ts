/**
 * Buckets kept in this process: the store when EDS_REDIS_URL is unset, and the fallback while
 * Redis cannot be reached. Only non-full buckets carry information, so when the map grows past
 * its bound the full ones (TAT in the past) are dropped first.
 */
import { type BucketDecision, type BucketPolicy, takeToken } from './tokenBucket.js';

export class MemoryBuckets {
  private readonly tats = new Map<string, number>();
  constructor(private readonly maxBuckets = 100_000) {}

  take(bucket: string, policy: BucketPolicy, now: number): BucketDecision {
    const { decision, tat } = takeToken(this.tats.get(bucket), policy, now);
    if (decision.allowed) {
      if (this.tats.size >= this.maxBuckets && !this.tats.has(bucket)) this.sweep(now);
      this.tats.set(bucket, tat);
    }
    return decision;
  }

  private sweep(now: number): void {
    for (const [bucket, tat] of this.tats) if (tat <= now) this.tats.delete(bucket);
    // Still full of live buckets (a flood of distinct keys or addresses): forget the oldest
    // eighth; a forgotten bucket starts full, which errs towards letting a client through.
    let drop = this.tats.size >= this.maxBuckets ? Math.ceil(this.maxBuckets / 8) : 0;
    for (const bucket of this.tats.keys()) {
      if (drop-- <= 0) break;
      this.tats.delete(bucket);
    }
  }

  get size(): number {
    return this.tats.size;
  }
}

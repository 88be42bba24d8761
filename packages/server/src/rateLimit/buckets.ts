/**
 * Where buckets live: Redis when EDS_REDIS_URL is set, this process otherwise — and this
 * process too whenever Redis cannot answer (decisions.md: fall back to limiting alone, log once,
 * count it, never answer 5xx because of it). One warning per outage, one info line when Redis
 * is back; every request decided locally because of an outage is counted.
 */
import type { RateLimitConfig } from '../config.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { MemoryBuckets } from './memoryBuckets.js';
import { RedisBuckets } from './redisBuckets.js';
import type { BucketDecision, BucketPolicy } from './tokenBucket.js';

/** After a failed command, how long to decide locally before trying Redis again. */
const RETRY_REDIS_AFTER_MS = 1000;

export class Buckets {
  private readonly memory = new MemoryBuckets();
  private readonly redis: RedisBuckets | undefined;
  private degraded = false;
  private skipRedisUntil = 0;

  constructor(
    settings: Pick<RateLimitConfig, 'redisUrl' | 'redisCommandTimeoutMs'>,
    private readonly logger: Logger,
    private readonly metrics: Metrics,
  ) {
    this.redis =
      settings.redisUrl === undefined
        ? undefined
        : new RedisBuckets(settings.redisUrl, {
            commandTimeoutMs: settings.redisCommandTimeoutMs,
            onReady: () => this.recovered(),
            onError: (error) => this.lost(error),
            onCall: (seconds) => metrics.rateLimitRedisCallDuration.observe(seconds),
          });
    metrics.rateLimitRedisUp.set(0);
  }

  /** A decision at once from this process's buckets, or the promise of Redis's. */
  take(bucket: string, policy: BucketPolicy, now: number): BucketDecision | Promise<BucketDecision> {
    const redis = this.redis;
    if (redis === undefined) return this.memory.take(bucket, policy, now);
    if (redis.ready && now >= this.skipRedisUntil) return this.takeFromRedis(redis, bucket, policy, now);
    // Not connected (yet, or any more: the client's 'error' event logs the outage).
    this.metrics.rateLimitLocalDecisions.inc();
    return this.memory.take(bucket, policy, now);
  }

  private async takeFromRedis(
    redis: RedisBuckets,
    bucket: string,
    policy: BucketPolicy,
    now: number,
  ): Promise<BucketDecision> {
    try {
      const decision = await redis.take(bucket, policy, now);
      // A timeout degrades without dropping the connection, so no 'ready' event follows it.
      if (this.degraded) this.recovered();
      return decision;
    } catch (error) {
      this.skipRedisUntil = now + RETRY_REDIS_AFTER_MS;
      this.lost(error as Error);
      this.metrics.rateLimitLocalDecisions.inc();
      return this.memory.take(bucket, policy, now);
    }
  }

  private lost(error: Error): void {
    if (this.degraded) return;
    this.degraded = true;
    this.metrics.rateLimitRedisUp.set(0);
    this.logger.warn(
      { err: { message: error.message, code: (error as NodeJS.ErrnoException).code } },
      'rate-limit store (Redis) unreachable: each process limits alone until it is back',
    );
  }

  private recovered(): void {
    this.skipRedisUntil = 0;
    this.metrics.rateLimitRedisUp.set(1);
    if (!this.degraded) return;
    this.degraded = false;
    this.logger.info('rate-limit store (Redis) reachable again: buckets are shared');
  }

  async close(): Promise<void> {
    await this.redis?.close();
  }
}

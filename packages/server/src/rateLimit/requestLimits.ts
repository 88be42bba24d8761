/**
 * The rate-limit rules of decisions.md, apart from HTTP: which bucket a request counts against,
 * with which rate and burst, and when it is refused (429 rate_limited with Retry-After).
 *
 * - A request whose key was identified counts against its key's bucket: the organization's own
 *   rate when it has one (`eds org update --rate-limit`), else EDS_RATE_LIMIT_PER_KEY; the
 *   burst keeps the deployment's burst-to-rate ratio. A rate of 0 is no limit.
 * - A request that identifies no key counts against its client address's bucket
 *   (EDS_RATE_LIMIT_UNAUTHENTICATED a second, burst 2×). An address found over budget is
 *   remembered here until it has a token again, so its next requests are refused before any
 *   token lookup — and without a Redis round trip, which keyed requests cannot afford twice.
 * - A refusal is held until the moment its request could have succeeded, at most
 *   EDS_RATE_LIMIT_HOLD_MS, then sent: the time to the bucket's next token, plus one emission
 *   interval for each refusal of the same bucket already held in this process (they are ahead of
 *   it in line for the coming tokens). A client that retries as soon as it is refused (a sync job
 *   ignoring Retry-After, with many connections) is paced to its limit instead of keeping the
 *   event loop busy with refusals that other keys' requests wait behind; it loses nothing, since
 *   it could not have succeeded sooner.
 */
import type { RateLimitConfig } from '../config.js';
import { ApiError } from '../domain/errors.js';
import type { Metrics } from '../metrics.js';
import type { Organization } from '../store/organizations.js';
import type { Buckets } from './buckets.js';
import { type BucketDecision, type BucketPolicy, intervalMs } from './tokenBucket.js';

export interface KeyLimit {
  readonly policy: BucketPolicy;
  readonly decision: BucketDecision;
}

/** Waits `ms` of real time (the buckets' clock may be a test's; a hold is real waiting). */
export type Sleep = (ms: number) => Promise<void>;

const sleepFor: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export class RequestLimits {
  /** Address → instant (ms) until which it is over budget. */
  private readonly blockedAddresses = new Map<string, number>();
  /** Bucket → refusals of it being held now. */
  private readonly held = new Map<string, number>();
  /** Rate → its key policy (organizations choose from few rates). */
  private readonly policies = new Map<number, BucketPolicy>();
  /** The budget of requests that identify no key, per address; undefined when it is off. */
  private readonly addressPolicy: BucketPolicy | undefined;

  constructor(
    private readonly config: RateLimitConfig,
    private readonly buckets: Buckets,
    private readonly metrics: Metrics,
    private readonly sleep: Sleep = sleepFor,
  ) {
    const rate = config.unauthenticated;
    this.addressPolicy = rate > 0 ? { rate, burst: 2 * rate } : undefined;
  }

  /**
   * The bucket for this organization's keys, or undefined when they are not limited. One policy
   * object per rate, so what is derived from a policy (its RateLimit-Policy field) is built once.
   */
  keyPolicy(organization: Pick<Organization, 'rateLimitPerKey'>): BucketPolicy | undefined {
    const { perKey, burst } = this.config;
    const rate = organization.rateLimitPerKey ?? perKey;
    if (rate <= 0) return undefined;
    let policy = this.policies.get(rate);
    if (policy === undefined) {
      const scaled = perKey > 0 ? Math.round((rate * burst) / perKey) : 2 * rate;
      policy = rate === perKey ? { rate, burst } : { rate, burst: Math.max(1, scaled) };
      this.policies.set(rate, policy);
    }
    return policy;
  }

  /**
   * Counts a keyed request: undefined when its key is not limited, its limit when allowed, a
   * rejection with 429 when refused. Without Redis the common case is decided at once, with no
   * promise: it runs on every keyed request, and each await is another turn of work.
   */
  chargeKey(
    keyId: string,
    organization: Pick<Organization, 'rateLimitPerKey'>,
    now: number,
    headersFor: (limit: KeyLimit) => Record<string, string>,
  ): KeyLimit | undefined | Promise<KeyLimit> {
    const policy = this.keyPolicy(organization);
    if (policy === undefined) return undefined;
    const bucket = `key:${keyId}`;
    const taken = this.buckets.take(bucket, policy, now);
    if (taken instanceof Promise)
      return taken.then((decision) => this.keyDecided(bucket, policy, decision, headersFor));
    return this.keyDecided(bucket, policy, taken, headersFor);
  }

  private keyDecided(
    bucket: string,
    policy: BucketPolicy,
    decision: BucketDecision,
    headersFor: (limit: KeyLimit) => Record<string, string>,
  ): KeyLimit | Promise<never> {
    const limit = { policy, decision };
    if (decision.allowed) return limit;
    this.metrics.rateLimited.inc({ bucket: 'key' });
    return this.hold(bucket, decision.retryAfterMs, policy).then((left) => {
      throw tooManyRequests('This API key is over its rate limit.', left, headersFor(limit));
    });
  }

  /**
   * Before any token lookup: undefined when the address is not known to be over budget, or when
   * `exempt` (asked only then) says the request need not be (no promise, so the common case
   * costs no extra turn); else a promise that rejects with 429.
   */
  refuseBlockedAddress(address: string, now: number, exempt?: () => boolean): Promise<never> | undefined {
    const until = this.blockedAddresses.get(address);
    if (until === undefined) return undefined;
    if (until <= now) {
      this.blockedAddresses.delete(address);
      return undefined;
    }
    if (exempt?.()) return undefined;
    this.metrics.rateLimited.inc({ bucket: 'address' });
    return this.hold(`addr:${address}`, until - now, this.addressPolicy).then((left) => {
      throw tooManyRequests('Too many requests without a valid API key from this address.', left);
    });
  }

  /**
   * Counts a request that identified no key: undefined when it is allowed (decided at once, with
   * no promise: every refused token of every client takes this path), else a promise that
   * rejects with 429 — or, with Redis, the promise of the decision.
   */
  chargeAddress(address: string, now: number): Promise<void> | undefined {
    const policy = this.addressPolicy;
    if (policy === undefined) return undefined;
    const bucket = `addr:${address}`;
    const taken = this.buckets.take(bucket, policy, now);
    if (taken instanceof Promise)
      return taken.then((decision) => this.addressDecided(address, bucket, policy, decision, now));
    return this.addressDecided(address, bucket, policy, taken, now);
  }

  private addressDecided(
    address: string,
    bucket: string,
    policy: BucketPolicy,
    decision: BucketDecision,
    now: number,
  ): Promise<void> | undefined {
    if (decision.allowed) return undefined;
    if (this.blockedAddresses.size >= 100_000) this.blockedAddresses.clear();
    this.blockedAddresses.set(address, now + decision.retryAfterMs);
    this.metrics.rateLimited.inc({ bucket: 'address' });
    return this.hold(bucket, decision.retryAfterMs, policy).then((left) => {
      throw tooManyRequests('Too many requests without a valid API key from this address.', left);
    });
  }

  /**
   * Holds a refusal until its request could have succeeded — its bucket's next token, one
   * emission interval later for each refusal of the bucket already held — at most the configured
   * bound; resolves with what is left of the wait when the refusal is sent (its Retry-After).
   */
  private async hold(
    bucket: string,
    retryAfterMs: number,
    policy: BucketPolicy | undefined,
  ): Promise<number> {
    const ahead = this.held.get(bucket) ?? 0;
    const wait = retryAfterMs + (policy ? ahead * intervalMs(policy) : 0);
    const ms = Math.min(wait, this.config.holdRefusalMaxMs);
    if (ms <= 0) return wait;
    this.held.set(bucket, ahead + 1);
    try {
      await this.sleep(ms);
    } finally {
      const still = (this.held.get(bucket) ?? 1) - 1;
      if (still > 0) this.held.set(bucket, still);
      else this.held.delete(bucket);
    }
    return wait - ms;
  }
}

function tooManyRequests(detail: string, retryAfterMs: number, headers: Record<string, string> = {}) {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new ApiError('rate_limited', `${detail} Retry after ${seconds} s.`, {
    ...headers,
    'Retry-After': String(seconds),
  });
}

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
 */
import type { RateLimitConfig } from '../config.js';
import { ApiError } from '../domain/errors.js';
import type { Metrics } from '../metrics.js';
import type { Organization } from '../store/organizations.js';
import type { Buckets } from './buckets.js';
import type { BucketDecision, BucketPolicy } from './tokenBucket.js';

export interface KeyLimit {
  readonly policy: BucketPolicy;
  readonly decision: BucketDecision;
}

export class RequestLimits {
  /** Address → instant (ms) until which it is over budget. */
  private readonly blockedAddresses = new Map<string, number>();

  constructor(
    private readonly config: RateLimitConfig,
    private readonly buckets: Buckets,
    private readonly metrics: Metrics,
  ) {}

  /** The bucket for this organization's keys, or undefined when they are not limited. */
  keyPolicy(organization: Pick<Organization, 'rateLimitPerKey'>): BucketPolicy | undefined {
    const { perKey, burst } = this.config;
    const rate = organization.rateLimitPerKey ?? perKey;
    if (rate <= 0) return undefined;
    if (rate === perKey) return { rate, burst };
    const scaled = perKey > 0 ? Math.round((rate * burst) / perKey) : 2 * rate;
    return { rate, burst: Math.max(1, scaled) };
  }

  /** Counts a keyed request; undefined when its key is not limited. Throws 429 when refused. */
  async chargeKey(
    keyId: string,
    organization: Pick<Organization, 'rateLimitPerKey'>,
    now: number,
    headersFor: (limit: KeyLimit) => Record<string, string>,
  ): Promise<KeyLimit | undefined> {
    const policy = this.keyPolicy(organization);
    if (policy === undefined) return undefined;
    const decision = await this.buckets.take(`key:${keyId}`, policy, now);
    const limit = { policy, decision };
    if (!decision.allowed) {
      this.metrics.rateLimited.inc({ bucket: 'key' });
      throw tooManyRequests('This API key is over its rate limit.', decision.retryAfterMs, headersFor(limit));
    }
    return limit;
  }

  /** Before any token lookup: throws 429 when the address is known to be over budget. */
  refuseBlockedAddress(address: string, now: number): void {
    const until = this.blockedAddresses.get(address);
    if (until === undefined) return;
    if (until <= now) {
      this.blockedAddresses.delete(address);
      return;
    }
    this.metrics.rateLimited.inc({ bucket: 'address' });
    throw tooManyRequests('Too many requests without a valid API key from this address.', until - now);
  }

  /** Counts a request that identified no key; throws 429 when the address is over budget. */
  async chargeAddress(address: string, now: number): Promise<void> {
    const rate = this.config.unauthenticated;
    if (rate <= 0) return;
    const decision = await this.buckets.take(`addr:${address}`, { rate, burst: 2 * rate }, now);
    if (decision.allowed) return;
    if (this.blockedAddresses.size >= 100_000) this.blockedAddresses.clear();
    this.blockedAddresses.set(address, now + decision.retryAfterMs);
    this.metrics.rateLimited.inc({ bucket: 'address' });
    throw tooManyRequests(
      'Too many requests without a valid API key from this address.',
      decision.retryAfterMs,
    );
  }
}

function tooManyRequests(detail: string, retryAfterMs: number, headers: Record<string, string> = {}) {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new ApiError('rate_limited', `${detail} Retry after ${seconds} s.`, {
    ...headers,
    'Retry-After': String(seconds),
  });
}

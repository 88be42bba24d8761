/**
 * Token-bucket arithmetic (decisions.md, Rate limits), written as GCRA: a bucket of `burst`
 * tokens refilled at `rate` a second is the same as one number per bucket, the "theoretical
 * arrival time" (TAT) — the instant the bucket would be full again. A request costs one
 * emission interval (1/rate s); it is allowed when the debt it leaves (TAT − now) fits in the
 * bucket (burst × interval). One number per bucket means the Redis version is a GET/SET per
 * bucket in one script (redisBuckets.ts) and this in-memory one a Map, with the same results.
 *
 * Why not a library: @fastify/rate-limit and rate-limiter-flexible both count fixed windows
 * (an INCR with an expiry); neither gives a token bucket with one atomic Redis round trip, and
 * rate-limiter-flexible's BurstyRateLimiter approximates a burst with two limiters (two round
 * trips). See docs/operations.md, "Rate limits".
 */

export interface BucketPolicy {
  /** Tokens a second (> 0). */
  readonly rate: number;
  /** Bucket size (≥ 1). */
  readonly burst: number;
}

export interface BucketDecision {
  readonly allowed: boolean;
  /** Whole tokens left after this request. */
  readonly remaining: number;
  /** Milliseconds until the bucket is full again. */
  readonly fullInMs: number;
  /** Refused only: milliseconds until one token is available. */
  readonly retryAfterMs: number;
}

/**
 * Instants and intervals are kept on a grid of 2⁻¹⁰ ms (about a microsecond). Why: a TAT is an
 * epoch-millisecond double (about 1.8e12, 41 bits), and 1000 / rate is rarely a short binary
 * fraction, so each `tat + interval` rounded, and a burst taken in one millisecond could find
 * its last token (a one-token bucket: its only one) a hair over capacity. On the grid every sum
 * and difference here is exact (epoch ms below 2⁴³, until the year 2248, and 10 bits of
 * fraction fit a double's 53), in JavaScript and in redisBuckets.ts's Lua alike. A rate moves by
 * at most half a step per interval: parts per million at ordinary rates, 0.05 % at 1,000 a
 * second.
 */
const GRID = 1024;

/** `ms` on the arithmetic's grid. */
export function onGrid(ms: number): number {
  return Math.round(ms * GRID) / GRID;
}

/** One request's cost in ms: at least one step of the grid. */
export function intervalMs(policy: BucketPolicy): number {
  return Math.max(1 / GRID, onGrid(1000 / policy.rate));
}

/** The decision for one request at `now`, and the TAT to store when it is allowed. */
export function takeToken(
  storedTat: number | undefined,
  policy: BucketPolicy,
  now: number,
): { decision: BucketDecision; tat: number } {
  const interval = intervalMs(policy);
  const capacity = policy.burst * interval;
  const at = onGrid(now);
  // A TAT stored off the grid (by an earlier release, through Redis) is put back on it.
  const tat = Math.max(storedTat === undefined ? at : onGrid(storedTat), at);
  const debt = tat - at + interval;
  if (debt > capacity) {
    return { decision: refused(tat - at, debt - capacity), tat };
  }
  return { decision: allowed(debt, capacity, interval), tat: tat + interval };
}

export function allowed(debtMs: number, capacityMs: number, interval: number): BucketDecision {
  // A small epsilon keeps floating-point error from costing a whole token.
  const remaining = Math.max(0, Math.floor((capacityMs - debtMs) / interval + 1e-9));
  return { allowed: true, remaining, fullInMs: debtMs, retryAfterMs: 0 };
}

export function refused(fullInMs: number, retryAfterMs: number): BucketDecision {
  return { allowed: false, remaining: 0, fullInMs, retryAfterMs };
}

/**
 * When to try again (decisions.md): the configured delays (default 5 s, 5 min, 30 min, 2 h, 5 h,
 * 10 h, 10 h, so 8 attempts in a round), each with ±jitter. A `Retry-After` on 429 or 503 is
 * honored when it asks for longer than the drawn delay, but never beyond the next step's ceiling
 * (that step's delay plus full jitter; the last step is its own next step), so a receiver cannot
 * park a delivery for days with one header.
 */

export interface RetryPolicy {
  /** Delays in seconds before attempts 2..n. */
  readonly retryScheduleSeconds: readonly number[];
  readonly jitterRatio: number;
}

export function maxAttemptsPerRound(policy: RetryPolicy): number {
  return policy.retryScheduleSeconds.length + 1;
}

/**
 * Delay in milliseconds before the next attempt, after `attemptsDone` attempts of this round,
 * or undefined when the round is exhausted.
 */
export function nextRetryDelayMs(
  policy: RetryPolicy,
  attemptsDone: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number | undefined {
  const schedule = policy.retryScheduleSeconds;
  const step = attemptsDone - 1;
  const base = schedule[step];
  if (base === undefined || step < 0) return undefined;
  const jitter = policy.jitterRatio * (2 * random() - 1);
  const drawn = Math.max(0, base * 1000 * (1 + jitter));
  if (retryAfterMs === undefined || retryAfterMs <= drawn) return drawn;
  const nextBase = schedule[step + 1] ?? base;
  const ceiling = nextBase * 1000 * (1 + policy.jitterRatio);
  return Math.max(drawn, Math.min(retryAfterMs, ceiling));
}

/** Statuses whose `Retry-After` is honored. */
export function honorsRetryAfter(status: number): boolean {
  return status === 429 || status === 503;
}

/** `Retry-After` as delta-seconds or an HTTP date, in milliseconds from `now`; else undefined. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  if (Number.isNaN(at) || !/[A-Za-z]/.test(text)) return undefined;
  return Math.max(0, at - now);
}

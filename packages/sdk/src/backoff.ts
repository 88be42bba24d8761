/**
 * Retry timing: exponential backoff with full jitter (a uniformly random delay between 0 and
 * the exponential ceiling), so many clients that failed together do not retry together.
 */

export interface BackoffOptions {
  /** Ceiling of the first retry's delay. */
  baseDelayMs: number;
  /** Largest ceiling, and the longest Retry-After the client will wait for. */
  maxDelayMs: number;
  random?: () => number;
}

/** Delay before retry number `retry` (1 for the first retry). */
export function backoffDelay(retry: number, options: BackoffOptions): number {
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (retry - 1));
  return Math.floor((options.random ?? Math.random)() * ceiling);
}

/**
 * Milliseconds a `Retry-After` header asks for: delay-seconds or an HTTP-date (RFC 9110).
 * Undefined when absent or unreadable, so the caller falls back to backoff.
 */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^[0-9]+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Waits, unless the caller's signal aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

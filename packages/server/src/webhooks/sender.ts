/**
 * One HTTP attempt: POST the stored body bytes with freshly signed headers, no redirects (3xx is
 * a result, not a hop), one deadline for the whole exchange, and the response body read only to
 * free the connection (bounded, never stored).
 */
import { type Dispatcher, request } from 'undici';
import {
  classifyErrorClass,
  classifyStatus,
  type ErrorClass,
  errorClassOf,
  type ResultClass,
} from './classify.js';

export interface AttemptResult {
  readonly result: ResultClass;
  readonly statusCode: number | null;
  readonly errorClass: ErrorClass | null;
  /** Raw `Retry-After` header of the response, if any. */
  readonly retryAfter: string | undefined;
  readonly durationMs: number;
}

export interface AttemptRequest {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly timeoutMs: number;
  /** Aborts the attempt from outside (shutdown, lease lost); the reason is the recorded class. */
  readonly abort?: AbortSignal;
}

/** Read at most this much of a response, to let the connection be reused; the rest is cut off. */
const RESPONSE_DRAIN_LIMIT = 64 * 1024;

export async function sendAttempt(dispatcher: Dispatcher, req: AttemptRequest): Promise<AttemptResult> {
  const started = performance.now();
  const controller = new AbortController();
  let aborted: ErrorClass | undefined;
  const timer = setTimeout(() => {
    aborted = 'timeout';
    controller.abort();
  }, req.timeoutMs);
  const onOuterAbort = () => {
    aborted = (req.abort?.reason as ErrorClass | undefined) ?? 'worker_shutdown';
    controller.abort();
  };
  req.abort?.addEventListener('abort', onOuterAbort, { once: true });
  if (req.abort?.aborted) onOuterAbort();
  try {
    const response = await request(req.url, {
      method: 'POST',
      dispatcher,
      headers: req.headers,
      body: req.body,
      signal: controller.signal,
      headersTimeout: req.timeoutMs,
      bodyTimeout: req.timeoutMs,
    });
    const retryAfter = response.headers['retry-after'];
    await response.body.dump({ limit: RESPONSE_DRAIN_LIMIT }).catch(() => {});
    return {
      result: classifyStatus(response.statusCode),
      statusCode: response.statusCode,
      errorClass: null,
      retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
      durationMs: performance.now() - started,
    };
  } catch (error) {
    const errorClass = aborted ?? errorClassOf(error);
    return {
      result: classifyErrorClass(errorClass),
      statusCode: null,
      errorClass,
      retryAfter: undefined,
      durationMs: performance.now() - started,
    };
  } finally {
    clearTimeout(timer);
    req.abort?.removeEventListener('abort', onOuterAbort);
  }
}

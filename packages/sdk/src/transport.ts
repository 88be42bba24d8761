/**
 * One GET against the API: bearer authentication, a per-attempt timeout, retries with backoff
 * for network failures and 503 only, and translation of every failure into `EdsApiError`.
 * The API key lives in a private field and is written only into the Authorization header.
 */
import { backoffDelay, parseRetryAfter, sleep } from './backoff.js';
import { EdsApiError, EdsNetworkError } from './errors.js';
import { isReasonCode } from './reasonCodes.js';
import type { Problem } from './types.js';

export interface TransportOptions {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  retries: number;
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
  fetch: typeof fetch;
}

export interface RequestOptions {
  /** Aborts the call, retries included; the abort reason is rethrown as is. */
  signal?: AbortSignal;
}

const USER_AGENT = 'eds-sdk-node/0.1.0';

export class Transport {
  readonly #apiKey: string;
  readonly #options: Omit<TransportOptions, 'apiKey'>;

  constructor(options: TransportOptions) {
    const { apiKey, ...rest } = options;
    this.#apiKey = apiKey;
    this.#options = rest;
  }

  /**
   * GETs `path` and returns the parsed JSON body. `route` is the path template, used in error
   * messages instead of the concrete path so IDs and query values stay out of logs.
   */
  async getJson<T>(
    route: string,
    path: string,
    query: URLSearchParams | undefined,
    opts: RequestOptions = {},
  ): Promise<T> {
    const { retries, retryBaseDelayMs, retryMaxDelayMs } = this.#options;
    const url = this.#url(path, query);
    const label = `GET ${route}`;
    for (let attempt = 1; ; attempt++) {
      const canRetry = attempt <= retries;
      const delay = () =>
        backoffDelay(attempt, { baseDelayMs: retryBaseDelayMs, maxDelayMs: retryMaxDelayMs });
      // Only the caller's own abort escapes #attempt as an exception; it ends the call at once.
      const outcome = await this.#attempt<T>(url, label, attempt, opts.signal);
      if (!(outcome instanceof EdsApiError)) return outcome.body;
      if (!outcome.retryable || !canRetry) throw outcome;
      if (outcome.status === 503 && outcome.retryAfterMs !== undefined) {
        // Honor Retry-After; when it is longer than we are willing to wait, hand it to the caller.
        if (outcome.retryAfterMs > retryMaxDelayMs) throw outcome;
        await sleep(Math.max(outcome.retryAfterMs, delay()), opts.signal);
      } else {
        await sleep(delay(), opts.signal);
      }
    }
  }

  #url(path: string, query: URLSearchParams | undefined): string {
    const search = query?.toString();
    return `${this.#options.baseUrl}${path}${search ? `?${search}` : ''}`;
  }

  async #attempt<T>(
    url: string,
    label: string,
    attempt: number,
    callerSignal: AbortSignal | undefined,
  ): Promise<{ body: T } | EdsApiError> {
    const timeout = AbortSignal.timeout(this.#options.timeoutMs);
    const signal = callerSignal ? AbortSignal.any([callerSignal, timeout]) : timeout;
    let response: Response;
    let text: string;
    try {
      response = await this.#options.fetch(url, {
        method: 'GET',
        headers: {
          authorization: `Bearer ${this.#apiKey}`,
          accept: 'application/json, application/problem+json',
          'user-agent': USER_AGENT,
        },
        // The API never redirects; following one could carry the key somewhere unexpected.
        redirect: 'manual',
        signal,
      });
      // Reading the body is part of the attempt: a stall here is a timeout like any other.
      text = await response.text();
    } catch (error) {
      if (callerSignal?.aborted) throw callerSignal.reason;
      const timedOut = timeout.aborted;
      return new EdsNetworkError({
        reasonCode: timedOut ? 'timeout' : 'network_error',
        detail: timedOut
          ? `No complete answer within ${this.#options.timeoutMs} ms.`
          : `The request did not reach the service or the connection failed (${describe(error)}).`,
        route: label,
        attempts: attempt,
        cause: error,
      });
    }
    const requestId = response.headers.get('x-request-id') ?? undefined;
    if (response.status >= 200 && response.status < 300) {
      try {
        return { body: JSON.parse(text) as T };
      } catch {
        return unexpected(response.status, 'The success answer was not JSON.', label, attempt, requestId);
      }
    }
    return problemError(response, text, label, attempt, requestId);
  }
}

function problemError(
  response: Response,
  text: string,
  route: string,
  attempts: number,
  headerRequestId: string | undefined,
): EdsApiError {
  const status = response.status;
  const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
  const problem = parseProblem(text);
  const requestId = problem?.request_id ?? headerRequestId;
  const retryable = status === 503;
  if (problem && isReasonCode(problem.reason_code)) {
    return new EdsApiError({
      status,
      reasonCode: problem.reason_code,
      detail: problem.detail || problem.title,
      requestId,
      retryable,
      route,
      attempts,
      retryAfterMs,
      problem,
    });
  }
  const what = problem ? `unknown reason_code ${JSON.stringify(problem.reason_code)}` : 'no problem body';
  return new EdsApiError({
    status,
    reasonCode: 'unexpected_response',
    detail: `HTTP ${status} with ${what}.`,
    requestId,
    retryable,
    route,
    attempts,
    retryAfterMs,
    problem,
  });
}

function parseProblem(text: string): Problem | undefined {
  try {
    const body: unknown = JSON.parse(text);
    if (body && typeof body === 'object' && typeof (body as Problem).reason_code === 'string') {
      return body as Problem;
    }
  } catch {
    // Not JSON (a proxy's HTML page, say): reported as unexpected_response.
  }
  return undefined;
}

function unexpected(
  status: number,
  detail: string,
  route: string,
  attempts: number,
  requestId: string | undefined,
): EdsApiError {
  return new EdsApiError({
    status,
    reasonCode: 'unexpected_response',
    detail,
    requestId,
    retryable: false,
    route,
    attempts,
  });
}

/** A short, secret-free description of a transport failure (its error code, e.g. ECONNREFUSED). */
function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  if (cause && typeof cause.code === 'string') return cause.code;
  if (error instanceof Error) return error.name;
  return 'unknown error';
}

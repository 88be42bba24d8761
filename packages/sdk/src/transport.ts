/**
 * One GET against the API: bearer authentication, a per-attempt timeout, retries with backoff
 * for network failures, 503 and 429 (after the Retry-After the service asks for), and
 * translation of every failure into `EdsApiError`. Every answer's rate-limit fields are kept as
 * the last seen limits; a conditional GET (If-None-Match) may come back "not modified".
 * The API key lives in a private field and is written only into the Authorization header.
 */
import { backoffDelay, parseRetryAfter, sleep } from './backoff.js';
import { EdsApiError, EdsNetworkError } from './errors.js';
import { type RateLimitStatus, readRateLimit } from './rateLimit.js';
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

/** An answer to a GET that may be conditional: the body, or "not modified" (304). */
export type Fetched<T> =
  | { readonly notModified: false; readonly body: T; readonly etag: string | undefined }
  | { readonly notModified: true; readonly etag: string | undefined };

const USER_AGENT = 'eds-sdk-node/0.1.0';

/** Statuses retried (within the retry budget): the service is briefly unable, or asks to slow down. */
const RETRIED_STATUSES = new Set([429, 503]);

export class Transport {
  readonly #apiKey: string;
  readonly #options: Omit<TransportOptions, 'apiKey'>;
  /** The rate-limit fields of the latest answer that carried them. */
  lastRateLimit: RateLimitStatus | undefined;

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
    const fetched = await this.get<T>(route, path, query, opts, undefined);
    if (fetched.notModified) throw new Error('unreachable: 304 without If-None-Match');
    return fetched.body;
  }

  /** As getJson, sending `If-None-Match: ifNoneMatch` when given; a 304 is "not modified". */
  async get<T>(
    route: string,
    path: string,
    query: URLSearchParams | undefined,
    opts: RequestOptions,
    ifNoneMatch: string | undefined,
  ): Promise<Fetched<T>> {
    const { retries, retryBaseDelayMs, retryMaxDelayMs } = this.#options;
    const url = this.#url(path, query);
    const label = `GET ${route}`;
    for (let attempt = 1; ; attempt++) {
      const canRetry = attempt <= retries;
      const delay = () =>
        backoffDelay(attempt, { baseDelayMs: retryBaseDelayMs, maxDelayMs: retryMaxDelayMs });
      // Only the caller's own abort escapes #attempt as an exception; it ends the call at once.
      const outcome = await this.#attempt<T>(url, label, attempt, opts.signal, ifNoneMatch);
      if (!(outcome instanceof EdsApiError)) return outcome;
      if (!outcome.retryable || !canRetry) throw outcome;
      if (RETRIED_STATUSES.has(outcome.status) && outcome.retryAfterMs !== undefined) {
        // Honor Retry-After; when it is longer than we are willing to wait, hand it to the caller.
        if (outcome.retryAfterMs > retryMaxDelayMs) throw outcome;
        // 429: the bucket has a token again after exactly Retry-After; 503: also spread retries.
        const wait = outcome.status === 429 ? outcome.retryAfterMs : Math.max(outcome.retryAfterMs, delay());
        await sleep(wait, opts.signal);
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
    ifNoneMatch: string | undefined,
  ): Promise<Fetched<T> | EdsApiError> {
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
          ...(ifNoneMatch === undefined ? {} : { 'if-none-match': ifNoneMatch }),
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
    this.lastRateLimit = readRateLimit(response.headers) ?? this.lastRateLimit;
    const etag = response.headers.get('etag') ?? undefined;
    if (response.status === 304 && ifNoneMatch !== undefined) return { notModified: true, etag };
    if (response.status >= 200 && response.status < 300) {
      try {
        return { notModified: false, body: JSON.parse(text) as T, etag };
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
  const retryable = RETRIED_STATUSES.has(status);
  if (problem && isReasonCode(problem.reason_code)) {
    return new EdsApiError({
      status,
      reasonCode: problem.reason_code,
      detail: problem.detail || problem.message || problem.title,
      field: typeof problem.field === 'string' ? problem.field : null,
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

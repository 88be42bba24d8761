/**
 * The one error type of the service: an HTTP status and a contract reason code. Thrown by the
 * domain, the HTTP plugins and the media host; rendered as problem+json in exactly one place
 * (http/problem.ts).
 */
import { REASONS, type ReasonCode } from '../contract/reasons.js';

/**
 * RFC 9110 requires a challenge on every 401; RFC 6750 gives bearer tokens theirs: no error code
 * when no credentials came, `invalid_token` when the ones that came cannot be used.
 */
const BEARER_CHALLENGE = 'Bearer realm="eds"';
const NO_CREDENTIALS = Object.freeze({ 'WWW-Authenticate': BEARER_CHALLENGE });
const UNUSABLE_CREDENTIALS = Object.freeze({
  'WWW-Authenticate': `${BEARER_CHALLENGE}, error="invalid_token"`,
});
/** For a 503: a dependency that failed is worth asking again a second later. */
export const RETRY_SHORTLY: Readonly<Record<string, string>> = Object.freeze({ 'Retry-After': '1' });
/** The default: most errors add no header, and a 401 then takes its challenge as it is. */
const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

export class ApiError extends Error {
  override name = 'ApiError';
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    readonly reasonCode: ReasonCode,
    /** A sentence for a human; never echoes tokens, secrets or links. */
    readonly detail: string = REASONS[reasonCode].title,
    headers: Readonly<Record<string, string>> = NO_HEADERS,
    /**
     * The query parameter that decided the code, as the client sent its name (the problem's
     * `field`); null when no single parameter applies.
     */
    readonly field: string | null = null,
  ) {
    // An ApiError is an answer to the client, not a fault: no stack is captured, which under a
    // flood of bad keys cost 6 % of the process.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(detail);
    Error.stackTraceLimit = limit;
    this.status = REASONS[reasonCode].status;
    if (this.status !== 401) this.headers = headers;
    else {
      const challenge = reasonCode === 'missing_bearer' ? NO_CREDENTIALS : UNUSABLE_CREDENTIALS;
      this.headers = headers === NO_HEADERS ? challenge : { ...challenge, ...headers };
    }
  }
}

const SHARED_REFUSALS = new WeakSet<ApiError>();

/**
 * A refusal that carries nothing of the request, built once and answered any number of times,
 * and known to the renderer, which writes its body once. Its members are read-only, so no
 * request can change it under another; it stays extensible, since a logger's error serializer
 * marks the errors it has seen with a property of its own.
 */
export function sharedRefusal(...args: ConstructorParameters<typeof ApiError>): ApiError {
  const refusal = new ApiError(...args);
  for (const member of [...Object.keys(refusal), 'message']) {
    Object.defineProperty(refusal, member, { writable: false, configurable: false });
  }
  SHARED_REFUSALS.add(refusal);
  return refusal;
}

export function isSharedRefusal(error: ApiError): boolean {
  return SHARED_REFUSALS.has(error);
}

/** A failure of an operator command (`eds`): printed on stderr, exit code non-zero. */
export class OperatorError extends Error {
  override name = 'OperatorError';
}

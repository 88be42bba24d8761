/**
 * The SDK's one API error class. Every failure of a client call is an `EdsApiError`; failures
 * where no answer arrived are its subclass `EdsNetworkError` (status 0). Errors carry what a
 * caller branches on and nothing secret: never the API key, never a signed audio link, never a
 * response body beyond the problem fields the service designed for callers.
 */
import type { ClientErrorCode, ErrorCode, ReasonCode } from './reasonCodes.js';
import type { Problem } from './types.js';

export interface EdsApiErrorInit {
  status: number;
  reasonCode: ErrorCode;
  detail: string;
  field?: string | null | undefined;
  requestId?: string | undefined;
  retryable: boolean;
  /** The route called, e.g. `GET /external/v1/encounters/{encounter_id}`. */
  route?: string | undefined;
  /** Attempts made, retries included. */
  attempts?: number | undefined;
  /** Delay the service asked for (Retry-After), in milliseconds. */
  retryAfterMs?: number | undefined;
  problem?: Problem | undefined;
  cause?: unknown;
}

export class EdsApiError extends Error {
  override name = 'EdsApiError';
  /** HTTP status; 0 when no answer arrived (see `EdsNetworkError`). */
  readonly status: number;
  /** The service's `reason_code`, or a client code (`network_error`, `timeout`, `unexpected_response`). */
  readonly reasonCode: ErrorCode;
  /** The service's `request_id` (or `X-Request-Id`); quote it to support. */
  readonly requestId: string | undefined;
  /** True when the same request may succeed later unchanged (503 and network failures). */
  readonly retryable: boolean;
  /**
   * The service's human sentence (its problem's `detail`, which its `message` repeats), or the
   * SDK's. `error.message` is longer: status, code, this sentence, route and request id, for logs.
   */
  readonly detail: string;
  /**
   * The query parameter at fault (`limit`, `offset`, `sort_order`, `start_at`, `end_at`, or for
   * `unsupported_filter` the key as sent); null when no single parameter applies or no problem
   * body arrived.
   */
  readonly field: string | null;
  readonly route: string | undefined;
  readonly attempts: number;
  readonly retryAfterMs: number | undefined;
  /** The problem body as received, when there was one. */
  readonly problem: Problem | undefined;

  constructor(init: EdsApiErrorInit) {
    const where = init.route ? ` (${init.route})` : '';
    const id = init.requestId ? ` [request ${init.requestId}]` : '';
    super(`${init.status || 'no response'} ${init.reasonCode}: ${init.detail}${where}${id}`, {
      cause: init.cause,
    });
    this.status = init.status;
    this.reasonCode = init.reasonCode;
    this.requestId = init.requestId;
    this.retryable = init.retryable;
    this.detail = init.detail;
    this.field = init.field ?? null;
    this.route = init.route;
    this.attempts = init.attempts ?? 1;
    this.retryAfterMs = init.retryAfterMs;
    this.problem = init.problem;
  }

  /** True when the service answered with this reason code. */
  is(code: ReasonCode | ClientErrorCode): boolean {
    return this.reasonCode === code;
  }

  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      status: this.status,
      reasonCode: this.reasonCode,
      requestId: this.requestId,
      retryable: this.retryable,
      detail: this.detail,
      field: this.field,
      route: this.route,
      attempts: this.attempts,
    };
  }
}

/** No answer arrived: connection refused or reset, DNS or TLS failure, or the timeout elapsed. */
export class EdsNetworkError extends EdsApiError {
  override name = 'EdsNetworkError';
  declare readonly reasonCode: 'network_error' | 'timeout';

  constructor(
    init: Omit<EdsApiErrorInit, 'status' | 'retryable'> & { reasonCode: 'network_error' | 'timeout' },
  ) {
    super({ ...init, status: 0, retryable: true });
  }
}

/** Thrown by `AudioLink.url` once the link's `expires_at` has passed. Fetch a new link. */
export class AudioLinkExpiredError extends Error {
  override name = 'AudioLinkExpiredError';
  readonly expiresAt: Date;

  constructor(expiresAt: Date) {
    super(
      `The audio link expired at ${expiresAt.toISOString()}; signed links must not be used after ` +
        'expires_at. Call getAudioLink() again for a fresh one.',
    );
    this.expiresAt = expiresAt;
  }
}

/**
 * The contract's result classes. Success: any 2xx. Retryable: connection, DNS and TLS errors,
 * timeouts, 408, 409, 425, 429 and 5xx. Terminal: 1xx, 3xx (redirects are not followed), 400,
 * 401, 403, 404 and every other 4xx. Refusals of our own egress policy are terminal too: they do
 * not heal by waiting, and `eds webhook recover` re-queues them once the cause is fixed.
 */

export type ResultClass = 'success' | 'retryable' | 'terminal';

const RETRYABLE_STATUSES = new Set([408, 409, 425, 429]);

export function classifyStatus(status: number): ResultClass {
  if (status >= 200 && status <= 299) return 'success';
  if (RETRYABLE_STATUSES.has(status) || (status >= 500 && status <= 599)) return 'retryable';
  return 'terminal';
}

/** Error classes recorded on attempts; names only, never messages that could carry data. */
export type ErrorClass =
  | 'timeout'
  | 'connection_refused'
  | 'connection_error'
  | 'dns_error'
  | 'tls_error'
  | 'egress_refused'
  | 'proxy_refused'
  | 'proxy_unreachable'
  | 'insecure_url'
  | 'invalid_url'
  | 'worker_shutdown'
  | 'lease_lost'
  | 'secret_unavailable';

const TERMINAL_ERRORS = new Set<ErrorClass>(['egress_refused', 'insecure_url', 'invalid_url']);

export function classifyErrorClass(error: ErrorClass): ResultClass {
  return TERMINAL_ERRORS.has(error) ? 'terminal' : 'retryable';
}

const TLS_CODES = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'EPROTO',
]);

/** How undici reports a forward proxy's answer other than 200 to CONNECT. */
const PROXY_REFUSAL = /^Proxy response \(\d+\) !== 200/;

/** Maps an error thrown by the HTTP client (possibly wrapped in `cause`) to its class. */
export function errorClassOf(error: unknown): ErrorClass {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof EgressRefusedError) return 'egress_refused';
    if (e instanceof ProxyUnreachableError) return 'proxy_unreachable';
    if (e instanceof Error && PROXY_REFUSAL.test(e.message)) return 'proxy_refused';
    const { code, name } = e as { code?: unknown; name?: unknown };
    if (name === 'TimeoutError' || name === 'AbortError') return 'timeout';
    if (typeof code !== 'string') continue;
    if (code === 'ECONNREFUSED') return 'connection_refused';
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL' || code === 'EAI_NODATA') {
      return 'dns_error';
    }
    if (code === 'ETIMEDOUT' || code.endsWith('_TIMEOUT')) return 'timeout';
    if (TLS_CODES.has(code) || code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_')) return 'tls_error';
  }
  return 'connection_error';
}

/** Thrown when a receiver's address is refused by the egress policy (egress.ts). */
export class EgressRefusedError extends Error {
  override name = 'EgressRefusedError';
  readonly code = 'EDS_EGRESS_REFUSED';
}

/** Thrown when the forward proxy cannot be reached (the receiver was never asked). */
export class ProxyUnreachableError extends Error {
  override name = 'ProxyUnreachableError';
  readonly code = 'EDS_PROXY_UNREACHABLE';
  constructor(cause: Error) {
    super('the forward proxy cannot be reached', { cause });
  }
}

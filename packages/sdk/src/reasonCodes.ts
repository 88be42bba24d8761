/**
 * The reason codes the service answers with: the contract's error table plus the codes the
 * product adds (`route_not_found`, `method_not_allowed`, `rate_limited`, `audit_unavailable`,
 * `service_unavailable`, and the media host's `link_invalid`, `link_expired`,
 * `range_not_satisfiable`, met only when fetching an `audio_url`). Copied, not imported, because
 * the SDK has no runtime dependency on the server; a test fails when this list and the server's
 * drift.
 */
export const REASON_CODES = [
  'unsupported_filter',
  'unsupported_document_type',
  'audio_not_available_for_document',
  'missing_bearer',
  'api_keys_disabled',
  'test_prefix_not_allowed',
  'malformed_token',
  'invalid_key',
  'disabled_key',
  'revoked_key',
  'expired_key',
  'org_scope_only_required',
  'missing_scope',
  'route_not_allowed',
  'organization_not_allowlisted',
  'link_invalid',
  'cross_organization_denied',
  'demo_training_denied',
  'encounter_not_found',
  'document_not_found',
  'transcript_not_found',
  'audio_not_found',
  'route_not_found',
  'method_not_allowed',
  'link_expired',
  'range_not_satisfiable',
  'invalid_limit',
  'invalid_offset',
  'invalid_sort',
  'invalid_query',
  'rate_limited',
  'digest_key_unavailable',
  'audio_storage_unavailable',
  'audit_unavailable',
  'service_unavailable',
] as const;

/** A reason code the service can put in a problem body. */
export type ReasonCode = (typeof REASON_CODES)[number];

/**
 * Codes the SDK itself assigns when there is no usable problem body: the request never got an
 * answer (`network_error`, `timeout`), or the answer was not what the contract promises
 * (`unexpected_response`, e.g. an HTML page from a proxy, or a reason code this SDK version
 * does not know).
 */
export type ClientErrorCode = 'network_error' | 'timeout' | 'unexpected_response';

export type ErrorCode = ReasonCode | ClientErrorCode;

const KNOWN = new Set<string>(REASON_CODES);

export function isReasonCode(value: unknown): value is ReasonCode {
  return typeof value === 'string' && KNOWN.has(value);
}

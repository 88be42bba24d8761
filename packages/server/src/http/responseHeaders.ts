/**
 * Response headers the OpenAPI document describes (decisions.md: Responses, Rate limits, paging
 * links, Compatibility and deprecation).
 */

/** On every answer under /external/v1, whatever its status. */
export const API_RESPONSE_HEADERS = {
  'X-Request-Id': {
    type: 'string',
    description: 'This request’s ID, also the problem body’s `request_id`. Quote it when asking for support.',
  },
  'Cache-Control': {
    type: 'string',
    enum: ['no-store'],
    description: 'Answers carry patient data or depend on the key: never stored by caches.',
  },
  'X-Content-Type-Options': { type: 'string', enum: ['nosniff'] },
} as const;

/** On every answer of a route the operator has announced for retirement. */
export const DEPRECATION_HEADERS = {
  Deprecation: {
    type: 'string',
    description:
      'Only on a route announced for retirement (RFC 9745): `@<Unix seconds>`, when it was or will be ' +
      'deprecated. The `Link` field then names the notice with `rel="deprecation"`.',
  },
  Sunset: {
    type: 'string',
    description:
      'Only on a route announced for retirement (RFC 8594): the HTTP-date after which it stops ' +
      'answering, at least 180 days after the announcement.',
  },
  Link: {
    type: 'string',
    description:
      'Only on a route announced for retirement: `<notice URL>; rel="deprecation"; type="text/html"`.',
  },
} as const;

export const RATE_LIMIT_HEADERS = {
  'RateLimit-Policy': {
    type: 'string',
    description:
      'The key’s quota policy (draft-ietf-httpapi-ratelimit-headers, structured field): ' +
      '`"key";q=<burst>;w=<seconds to refill the burst>`. Present on every answer to a request ' +
      'whose key was identified, errors included, while its key is rate-limited.',
  },
  RateLimit: {
    type: 'string',
    description:
      'What is left of the quota: `"key";r=<requests left now>;t=<seconds until the quota is full again>`.',
  },
} as const;

export const RETRY_AFTER_HEADER = {
  'Retry-After': {
    type: 'integer',
    minimum: 1,
    description: 'Whole seconds to wait before the request can succeed.',
  },
} as const;

export const LINK_HEADER = {
  Link: {
    type: 'string',
    description:
      'RFC 8288 paging links: `rel="next"` when another page exists within the offset limit, ' +
      '`rel="prev"` when offset > 0, and `rel="first"`; each is this request with only `offset` changed. ' +
      'On a route announced for retirement, also the notice with `rel="deprecation"`.',
  },
} as const;

export const WWW_AUTHENTICATE_HEADER = {
  'WWW-Authenticate': {
    type: 'string',
    description:
      'The bearer challenge (RFC 9110, RFC 6750): `Bearer realm="eds"` when no key came, ' +
      '`Bearer realm="eds", error="invalid_token"` when the key that came cannot be used.',
  },
} as const;

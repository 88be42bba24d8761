/** Response headers the OpenAPI document describes (decisions.md, Rate limits; paging links). */

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
      '`rel="prev"` when offset > 0, and `rel="first"`; each is this request with only `offset` changed.',
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

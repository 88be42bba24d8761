/**
 * A retiring route's answers, errors and 304s included, carry `Deprecation` (RFC 9745), `Sunset`
 * (RFC 8594) and a `Link` with `rel="deprecation"` to the notice, so a partner's client sees the
 * deadline on any call it makes (decisions.md, "Compatibility and deprecation").
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RouteDeprecation } from '../deprecations.js';

/** The three header values of one deprecation. */
export function deprecationHeaders(deprecation: RouteDeprecation): {
  Deprecation: string;
  Sunset: string;
  Link: string;
} {
  return {
    // RFC 9745: a structured-field Date, `@` and whole seconds since the epoch.
    Deprecation: `@${Math.floor(deprecation.deprecatedAt / 1000)}`,
    // RFC 8594: an HTTP-date (IMF-fixdate).
    Sunset: new Date(deprecation.sunsetAt).toUTCString(),
    Link: `<${deprecation.link}>; rel="deprecation"; type="text/html"`,
  };
}

/** A route's onSend hook: the deprecation fields on every answer, beside any paging links. */
export function sendDeprecationHeaders(deprecation: RouteDeprecation) {
  const fields = deprecationHeaders(deprecation);
  return async (_request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    reply.header('Deprecation', fields.Deprecation);
    reply.header('Sunset', fields.Sunset);
    const links = reply.getHeader('link');
    reply.header('Link', links ? `${String(links)}, ${fields.Link}` : fields.Link);
    return payload;
  };
}

/**
 * Per-route gate, run in onRequest before anything reads the query: authentication and the
 * rate limits (plugins/rateLimit.ts), then route enablement for the caller's organization, then
 * the route's scopes (contract and decisions.md, check order).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { KeyRecord } from '../../auth/keyCache.js';
import { type Caller, requestCredentials } from '../../auth/verifyApiKey.js';
import type { RouteDefinition } from '../../contract/routes.js';
import { ApiError } from '../../domain/errors.js';
import type { ApiContext } from '../apiContext.js';
import { announceRolledKeyDeadline } from './keyDeadlineHeader.js';
import { verifyWithinLimits } from './rateLimit.js';

declare module 'fastify' {
  interface FastifyRequest {
    caller?: Caller;
    /** Present once the request got past bearer parsing: such a request is audited. */
    auditSubject?: { keyId: string | null; organizationId: string | null };
  }
}

export function checkRouteAccess(route: RouteDefinition, record: KeyRecord): void {
  const { organization, key } = record;
  if (!organization.allowlisted) {
    throw new ApiError(
      'organization_not_allowlisted',
      'Your organization is not enabled for the external API.',
    );
  }
  if (!organization.routes.includes(route.group)) {
    throw new ApiError(
      'route_not_allowed',
      `Your organization is not enabled for the ${route.group} routes.`,
    );
  }
  const missing = route.scopes.filter((scope) => !key.scopes.includes(scope));
  if (missing.length > 0) {
    throw new ApiError('missing_scope', `This route needs the scope(s): ${missing.join(', ')}.`);
  }
}

/**
 * A refusal decided at once (credentials refused before any lookup, or a token the key cache
 * holds as no key) is returned, for the caller to answer; anything else is a promise, rejected
 * with the refusal.
 */
export function authorizeRoute(route: RouteDefinition, context: ApiContext) {
  return function authorize(request: FastifyRequest, reply: FastifyReply): ApiError | Promise<void> {
    const token = requestCredentials(request.raw.rawHeaders);
    if (token !== undefined) request.auditSubject = { keyId: null, organizationId: null };
    const seen: { record?: KeyRecord } = {};
    const verified = verifyWithinLimits(context, request, reply, token, seen);
    // No key was found: no deadline to announce, no key to audit.
    if (verified instanceof ApiError) return verified;
    return admit(route, context, request, reply, verified, seen);
  };
}

async function admit(
  route: RouteDefinition,
  context: ApiContext,
  request: FastifyRequest,
  reply: FastifyReply,
  verified: Promise<Caller>,
  seen: { record?: KeyRecord },
): Promise<void> {
  try {
    const caller = await verified;
    checkRouteAccess(route, caller.record);
    request.caller = caller;
    context.lastUsed.record(caller.keyId, context.services.clock());
  } finally {
    // Every answer to a rolled key carries its deadline: refusals after identification too.
    if (seen.record) announceRolledKeyDeadline(reply, seen.record.key);
    if (seen.record && request.auditSubject) {
      request.auditSubject = { keyId: seen.record.key.id, organizationId: seen.record.organization.id };
    }
  }
}

/**
 * Authentication inside the rate limits, in decisions.md's order: an address known to be over
 * its budget is refused before its token is looked up; a request whose key was identified is
 * counted against the key (and answered 429 before route enablement, scopes, query and
 * lookup); a request that identifies no key is counted against its address. Every answer to a
 * keyed request carries the RateLimit fields, errors included. When Redis decides and the key's
 * bucket is known to have tokens to spare, the route does its work during the round trip, and
 * the answer waits for the decision (limitBeforeAnswer.ts), so a refusal still comes first.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { KeyRecord } from '../../auth/keyCache.js';
import { type Caller, verifyApiKey } from '../../auth/verifyApiKey.js';
import type { ReasonCode } from '../../contract/reasons.js';
import { ApiError } from '../../domain/errors.js';
import { rateLimitFields } from '../../rateLimit/fields.js';
import type { KeyLimit } from '../../rateLimit/requestLimits.js';
import type { ApiContext } from '../apiContext.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** A rate-limit decision still on its way from Redis: the answer waits for it. */
    pendingLimit?: Promise<void>;
  }
}

/** The failures of a request that identified no key: counted per client address. */
const NO_KEY_IDENTIFIED: ReadonlySet<ReasonCode> = new Set([
  'missing_bearer',
  'malformed_token',
  'invalid_key',
  'test_prefix_not_allowed',
]);

export async function verifyWithinLimits(
  context: ApiContext,
  request: FastifyRequest,
  reply: FastifyReply,
  token: string | undefined,
  seen: { record?: KeyRecord },
): Promise<Caller> {
  const { limits, services } = context;
  const now = services.clock();
  const blocked = limits.refuseBlockedAddress(request.ip, now);
  if (blocked) await blocked;
  let caller: Caller;
  try {
    caller = await verifyApiKey(context.verifyDeps, token, seen);
  } catch (error) {
    if (seen.record) await chargeKey(context, reply, seen.record, now)?.decided;
    else if (error instanceof ApiError && NO_KEY_IDENTIFIED.has(error.reasonCode)) {
      await limits.chargeAddress(request.ip, now);
    }
    throw error;
  }
  const charged = chargeKey(context, reply, caller.record, now);
  if (charged === undefined) return caller;
  if (charged.workAhead === undefined) {
    await charged.decided;
    return caller;
  }
  // Decided by Redis while the route works; limitBeforeAnswer.ts waits for it before answering.
  charged.decided.catch(() => undefined);
  request.pendingLimit = charged.decided;
  await charged.workAhead;
  return caller;
}

/**
 * Undefined when decided at once (no Redis); else the decision, which sets the fields on the
 * reply when it arrives, and whether the route may work before it (requestLimits.ts).
 */
function chargeKey(
  context: ApiContext,
  reply: FastifyReply,
  record: KeyRecord,
  now: number,
): { decided: Promise<void>; workAhead?: Promise<void> } | undefined {
  const charged = context.limits.chargeKey(record.key.id, record.organization, now, rateLimitFields);
  if (charged instanceof Promise) return { decided: charged.then((limit) => setFields(reply, limit)) };
  if (charged !== undefined && 'decided' in charged) {
    const decided = charged.decided.then((limit) => setFields(reply, limit));
    return charged.workAhead ? { decided, workAhead: charged.workAhead } : { decided };
  }
  setFields(reply, charged);
  return undefined;
}

function setFields(reply: FastifyReply, limit: KeyLimit | undefined): void {
  if (limit !== undefined) reply.headers(rateLimitFields(limit));
}

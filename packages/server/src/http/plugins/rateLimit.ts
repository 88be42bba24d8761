/**
 * Authentication inside the rate limits, in decisions.md's order: an address known to be over
 * its budget is refused before its token is looked up, unless the token is a key this process
 * has already found usable (no lookup to protect; one junk client must not block every partner
 * behind the same address); a request whose key was identified is
 * counted against the key (and answered 429 before route enablement, scopes, query and
 * lookup); a request that identifies no key is counted against its address. Every answer to a
 * keyed request carries the RateLimit fields, errors included.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { KeyRecord } from '../../auth/keyCache.js';
import {
  type Caller,
  type Credentials,
  type Digested,
  isKnownLiveKey,
  offlineCheck,
  refusedFromCache,
  verifyWellFormedKey,
} from '../../auth/verifyApiKey.js';
import type { ReasonCode } from '../../contract/reasons.js';
import { ApiError } from '../../domain/errors.js';
import { rateLimitFields } from '../../rateLimit/fields.js';
import type { KeyLimit } from '../../rateLimit/requestLimits.js';
import type { ApiContext } from '../apiContext.js';

/** The failures of a request that identified no key: counted per client address. */
const NO_KEY_IDENTIFIED: ReadonlySet<ReasonCode> = new Set([
  'missing_bearer',
  'malformed_token',
  'invalid_key',
  'test_prefix_not_allowed',
]);

/**
 * A refusal decided from the credentials alone or from the key cache (a digest known to be no
 * key), with the address allowed at once, is returned as it is: the common case of a flood of bad
 * keys, where an exception thrown through async frames would cost more than the rest of the
 * answer. Anything else is the promise of the caller, rejected with the refusal.
 */
export function verifyWithinLimits(
  context: ApiContext,
  request: FastifyRequest,
  reply: FastifyReply,
  token: Credentials,
  seen: { record?: KeyRecord },
): ApiError | Promise<Caller> {
  const checked = offlineCheck(context.verifyDeps, token);
  let refusal: ApiError;
  let fromKeyCache = false;
  if (checked instanceof ApiError) refusal = checked;
  else {
    const cached = refusedFromCache(context.verifyDeps, checked);
    if (!(cached instanceof ApiError))
      return verifyKeyWithinLimits(context, request, reply, checked, seen, cached);
    refusal = cached;
    fromKeyCache = true;
  }
  const { limits } = context;
  const now = context.services.clock();
  // Such credentials are never a known live key (a digest cached as no key has left the keys
  // found usable): a blocked address is refused without exemption.
  const blocked = limits.refuseBlockedAddress(request.ip, now);
  if (blocked) return blocked;
  if (fromKeyCache) context.verifyDeps.metrics?.keyCacheLookups.count('hit');
  const charged = NO_KEY_IDENTIFIED.has(refusal.reasonCode)
    ? limits.chargeAddress(request.ip, now)
    : undefined;
  if (charged === undefined) return refusal;
  return charged.then(() => {
    throw refusal;
  });
}

/** For a token that passed the offline checks: looked up, within the limits. */
async function verifyKeyWithinLimits(
  context: ApiContext,
  request: FastifyRequest,
  reply: FastifyReply,
  token: string,
  seen: { record?: KeyRecord },
  digested: Digested | undefined,
): Promise<Caller> {
  const { limits, services } = context;
  const now = services.clock();
  const blocked = limits.refuseBlockedAddress(request.ip, now, () =>
    isKnownLiveKey(context.verifyDeps, token, digested),
  );
  if (blocked) await blocked;
  let caller: Caller;
  try {
    caller = await verifyWellFormedKey(context.verifyDeps, token, seen, digested);
  } catch (error) {
    if (seen.record) await chargeKey(context, reply, seen.record, now);
    else if (error instanceof ApiError && NO_KEY_IDENTIFIED.has(error.reasonCode)) {
      const charged = limits.chargeAddress(request.ip, now);
      if (charged !== undefined) await charged;
    }
    throw error;
  }
  const charged = chargeKey(context, reply, caller.record, now);
  if (charged !== undefined) await charged;
  return caller;
}

/** Undefined when decided at once (no Redis), else the promise of the decision. */
function chargeKey(
  context: ApiContext,
  reply: FastifyReply,
  record: KeyRecord,
  now: number,
): Promise<void> | undefined {
  const charged = context.limits.chargeKey(record.key.id, record.organization, now, rateLimitFields);
  if (charged instanceof Promise) return charged.then((limit) => setFields(reply, limit));
  setFields(reply, charged);
  return undefined;
}

function setFields(reply: FastifyReply, limit: KeyLimit | undefined): void {
  if (limit !== undefined) reply.headers(rateLimitFields(limit));
}

/**
 * The authentication chain, in decisions.md's order (more than one Authorization header is
 * malformed_token before anything else: which one counts would be ambiguous):
 *   missing_bearer → api_keys_disabled (deployment) → test_prefix_not_allowed → malformed_token
 *   → invalid_key → revoked_key → disabled_key → expired_key → api_keys_disabled (organization)
 *   → org_scope_only_required.
 * Format and checksum are checked offline, before any lookup; the digest secret or the key store
 * failing is 503 digest_key_unavailable, never a 500.
 */
import type { Config } from '../config.js';
import type { Store } from '../database/connection.js';
import { ApiError, sharedRefusal } from '../domain/errors.js';
import type { Metrics } from '../metrics.js';
import { findKeyByDigest, redigestApiKey, stampDigestSecret } from '../store/apiKeys.js';
import { type DigestKeyProvider, digestSecretId, digestToken } from './digest.js';
import type { KeyCache, KeyRecord } from './keyCache.js';
import { isWellFormedToken, tokenEnvironment } from './token.js';

export interface Caller {
  keyId: string;
  organizationId: string;
  record: KeyRecord;
}

export interface VerifyDeps {
  config: Pick<Config, 'apiKeys' | 'deploymentMode'>;
  store: Store;
  digestKey: DigestKeyProvider;
  cache: KeyCache;
  metrics?: Metrics;
  clock: () => number;
}

const BEARER = /^Bearer +([^ ]+) *$/i;

/** Stands for two or more Authorization headers: which one counts is ambiguous, so none does. */
export const AMBIGUOUS_CREDENTIALS = Symbol('ambiguous credentials');

/** What a request presents: a bearer token, none, or several Authorization headers. */
export type Credentials = string | undefined | typeof AMBIGUOUS_CREDENTIALS;

/** The token from an Authorization header, or undefined when there is no usable bearer. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  return BEARER.exec(header)?.[1];
}

/**
 * The credentials of a request, from its raw header list: Node's parsed headers keep only the
 * first Authorization, which would let a second one pass unseen.
 */
export function requestCredentials(rawHeaders: readonly string[]): Credentials {
  let header: string | undefined;
  let seen = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() !== 'authorization') continue;
    if (seen) return AMBIGUOUS_CREDENTIALS;
    seen = true;
    header = rawHeaders[i + 1];
  }
  return bearerToken(header);
}

/**
 * The chain's refusals carry nothing of the request, so each is built once: constructing an
 * Error per refusal was a measurable share of answering a flood of bad keys.
 */
const REFUSED = {
  ambiguous: sharedRefusal('malformed_token', 'Send exactly one Authorization header.'),
  missing: sharedRefusal('missing_bearer', 'Send the API key as `Authorization: Bearer <key>`.'),
  keysDisabled: sharedRefusal('api_keys_disabled', 'API keys are disabled on this deployment.'),
  testKey: sharedRefusal('test_prefix_not_allowed', 'Test keys are not accepted by this deployment.'),
  malformed: sharedRefusal('malformed_token', 'The API key is not well-formed.'),
  unknown: sharedRefusal('invalid_key', 'The API key is not recognised.'),
  revoked: sharedRefusal('revoked_key', 'The API key has been revoked.'),
  disabled: sharedRefusal('disabled_key', 'The API key is disabled.'),
  expired: sharedRefusal('expired_key', 'The API key has expired.'),
  organizationKeysDisabled: sharedRefusal(
    'api_keys_disabled',
    'API keys are disabled for this organization.',
  ),
  notOrganizationKey: sharedRefusal(
    'org_scope_only_required',
    'Only organization-scoped API keys are accepted.',
  ),
  unverifiable: sharedRefusal('digest_key_unavailable', 'Key verification is temporarily unavailable.'),
};

/**
 * The checks made on the credentials alone, before any lookup, in the chain's order: the token
 * when they pass, else the refusal.
 */
export function offlineCheck(deps: VerifyDeps, token: Credentials): string | ApiError {
  if (token === AMBIGUOUS_CREDENTIALS) return REFUSED.ambiguous;
  if (token === undefined) return REFUSED.missing;
  if (!deps.config.apiKeys.enabled) return REFUSED.keysDisabled;
  if (tokenEnvironment(token) === 'test' && deps.config.deploymentMode === 'live') {
    return REFUSED.testKey;
  }
  if (!isWellFormedToken(token)) return REFUSED.malformed;
  return token;
}

/** `seen.record` is filled as soon as the key is found, so failures can still be audited. */
export async function verifyApiKey(
  deps: VerifyDeps,
  token: Credentials,
  seen: { record?: KeyRecord } = {},
): Promise<Caller> {
  const checked = offlineCheck(deps, token);
  if (checked instanceof ApiError) throw checked;
  return verifyWellFormedKey(deps, checked, seen);
}

/** A token's digest under the current digest secret. */
export interface Digested {
  secret: string;
  digest: string;
}

/**
 * For a token that passed offlineCheck, what the key cache alone decides: `invalid_key` for a
 * digest it holds as no key (with no previous secret to try it under), else the digest for the
 * lookup to use, or undefined when the current secret cannot be had (the lookup then says why;
 * a previous secret that cannot be had is the lookup's to report, if it needs it). A flood
 * of well-formed unknown tokens, the cheapest junk to make, is answered without a promise or a
 * throw. The caller counts the cache hit once the address may be answered at all: a blocked
 * address's token is not looked up.
 */
export function refusedFromCache(deps: VerifyDeps, token: string): ApiError | Digested | undefined {
  let digested: Digested;
  try {
    const secret = deps.digestKey.current();
    digested = { secret, digest: digestToken(token, secret) };
  } catch {
    return undefined;
  }
  try {
    if (deps.digestKey.previous?.() !== undefined) return digested;
  } catch {
    // The lookup tries the previous secret only for a digest the current one does not know.
    return digested;
  }
  if (deps.cache.get(digested.digest, deps.clock()) !== null) return digested;
  return REFUSED.unknown;
}

/** The rest of the chain, for a token that passed offlineCheck (`digested`: its digest, if made). */
export async function verifyWellFormedKey(
  deps: VerifyDeps,
  token: string,
  seen: { record?: KeyRecord } = {},
  digested?: Digested,
): Promise<Caller> {
  const record = await lookupOrUnavailable(deps, token, digested);
  if (!record) throw REFUSED.unknown;
  seen.record = record;
  const { key, organization } = record;
  if (key.state === 'revoked') throw REFUSED.revoked;
  if (key.state === 'disabled') throw REFUSED.disabled;
  if (key.expiresAt !== null && key.expiresAt <= deps.clock()) throw REFUSED.expired;
  if (!organization.apiKeysEnabled) throw REFUSED.organizationKeysDisabled;
  if (key.kind !== 'organization') throw REFUSED.notOrganizationKey;
  return { keyId: key.id, organizationId: organization.id, record };
}

/**
 * Any failure while the key is looked up (the digest secret, the key store, a previous secret)
 * means the key could not be verified: digest_key_unavailable, and only then (decisions.md,
 * Unexpected failures).
 */
async function lookupOrUnavailable(
  deps: VerifyDeps,
  token: string,
  digested: Digested | undefined,
): Promise<KeyRecord | null> {
  try {
    return await lookup(deps, token, digested);
  } catch {
    throw REFUSED.unverifiable;
  }
}

/**
 * Whether the token is a key this process has found usable (keyCache.ts), decided without a store
 * read (and without a digest for a token that is not well-formed). Such a request is charged to
 * its key's bucket only, never refused for its address (decisions.md, Hardening).
 */
export function isKnownLiveKey(deps: VerifyDeps, token: Credentials, digested?: Digested): boolean {
  if (typeof token !== 'string' || !deps.config.apiKeys.enabled || !isWellFormedToken(token)) return false;
  if (tokenEnvironment(token) === 'test' && deps.config.deploymentMode === 'live') return false;
  if (digested !== undefined) return deps.cache.isKnownLive(digested.digest);
  try {
    return deps.cache.isKnownLive(digestToken(token, deps.digestKey.current()));
  } catch {
    return false;
  }
}

async function lookup(deps: VerifyDeps, token: string, digested?: Digested): Promise<KeyRecord | null> {
  const secret = digested?.secret ?? deps.digestKey.current();
  const digest = digested?.digest ?? digestToken(token, secret);
  const now = deps.clock();
  const cached = deps.cache.get(digest, now);
  if (cached !== undefined) {
    deps.metrics?.keyCacheLookups.count('hit');
    if (cached !== null) return cached;
    return lookupPrevious(deps, token, { secret, digest }, now);
  }
  const underway = deps.cache.joinRead(digest);
  if (underway !== undefined) {
    deps.metrics?.keyCacheLookups.count('joined');
    return underway;
  }
  deps.metrics?.keyCacheLookups.count('miss');
  return deps.cache.startRead(digest, readKey(deps, token, secret, digest, now));
}

/**
 * A missed digest's store read, which requests missing the same digest meanwhile wait for
 * (keyCache.ts, `joinRead`). Its answers are cached only if the cache was not cleared meanwhile.
 */
async function readKey(
  deps: VerifyDeps,
  token: string,
  secret: string,
  digest: string,
  now: number,
): Promise<KeyRecord | null> {
  const generation = deps.cache.generation;
  const found = await findKeyByDigest(deps.store.db, digest);
  if (!found) {
    // A concurrent verification may have found the key and moved it to this digest while this
    // read ran on an older snapshot: its answer is newer than this miss, so it wins (else this
    // miss would cache the moved key as unknown, and the previous digest is gone).
    const meanwhile = deps.cache.get(digest, now);
    if (meanwhile) return meanwhile;
    deps.cache.set(digest, null, now, generation);
    return lookupPrevious(deps, token, { secret, digest }, now, generation);
  }
  const record = { key: found.key, organization: found.organization };
  const secretId = digestSecretId(secret);
  if (found.key.digestSecretId !== secretId) {
    // Stored before fingerprints were recorded: note that it is on the current secret, once.
    await storeWrite(() => stampDigestSecret(deps.store.db, found.key.id, digest, secretId));
    record.key = { ...found.key, digestSecretId: secretId };
  }
  deps.cache.set(digest, record, now, generation);
  return record;
}

/**
 * Only for a digest the current secret does not know, and only while a previous secret is
 * configured: the key is looked up by both digests in one read (another process may be
 * re-digesting it at this moment), and one found by the previous digest is moved to the current.
 */
async function lookupPrevious(
  deps: VerifyDeps,
  token: string,
  current: { secret: string; digest: string },
  now: number,
  generation = deps.cache.generation,
): Promise<KeyRecord | null> {
  const previousSecret = deps.digestKey.previous?.();
  if (previousSecret === undefined) return null;
  const previousDigest = digestToken(token, previousSecret);
  if (deps.cache.get(previousDigest, now) === null) return null;
  const found = await findKeyByDigest(deps.store.db, [current.digest, previousDigest]);
  if (!found) {
    deps.cache.set(previousDigest, null, now, generation);
    return null;
  }
  const secretId = digestSecretId(current.secret);
  if (found.digest === previousDigest) {
    const moved = await storeWrite(() =>
      redigestApiKey(deps.store.db, found.key.id, previousDigest, { digest: current.digest, secretId }),
    );
    if (moved) deps.metrics?.keyRedigests.inc();
  }
  const record = { key: { ...found.key, digestSecretId: secretId }, organization: found.organization };
  deps.cache.set(current.digest, record, now, generation);
  deps.cache.set(previousDigest, null, now, generation);
  return record;
}

/** The key verified either way; a bookkeeping write that fails is simply tried on a later miss. */
async function storeWrite<T>(write: () => Promise<T>): Promise<T | undefined> {
  try {
    return await write();
  } catch {
    // Nothing to do: the answer does not depend on it.
    return undefined;
  }
}

/**
 * The authentication chain, in decisions.md's order:
 *   missing_bearer → api_keys_disabled (deployment) → test_prefix_not_allowed → malformed_token
 *   → invalid_key → revoked_key → disabled_key → expired_key → api_keys_disabled (organization)
 *   → org_scope_only_required.
 * Format and checksum are checked offline, before any lookup; the digest secret or the key store
 * failing is 503 digest_key_unavailable, never a 500.
 */
import type { Config } from '../config.js';
import { ApiError } from '../domain/errors.js';
import type { Metrics } from '../metrics.js';
import { findKeyByDigest } from '../store/apiKeys.js';
import type { Store } from '../store/database.js';
import { type DigestKeyProvider, digestToken } from './digest.js';
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

/** The token from an Authorization header, or undefined when there is no usable bearer. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  return BEARER.exec(header)?.[1];
}

/** `seen.record` is filled as soon as the key is found, so failures can still be audited. */
export async function verifyApiKey(
  deps: VerifyDeps,
  token: string | undefined,
  seen: { record?: KeyRecord } = {},
): Promise<Caller> {
  if (token === undefined)
    throw new ApiError('missing_bearer', 'Send the API key as `Authorization: Bearer <key>`.');
  if (!deps.config.apiKeys.enabled)
    throw new ApiError('api_keys_disabled', 'API keys are disabled on this deployment.');
  if (tokenEnvironment(token) === 'test' && deps.config.deploymentMode === 'live') {
    throw new ApiError('test_prefix_not_allowed', 'Test keys are not accepted by this deployment.');
  }
  if (!isWellFormedToken(token)) throw new ApiError('malformed_token', 'The API key is not well-formed.');

  const record = await lookup(deps, token);
  if (!record) throw new ApiError('invalid_key', 'The API key is not recognised.');
  seen.record = record;
  const { key, organization } = record;
  if (key.state === 'revoked') throw new ApiError('revoked_key', 'The API key has been revoked.');
  if (key.state === 'disabled') throw new ApiError('disabled_key', 'The API key is disabled.');
  if (key.expiresAt !== null && key.expiresAt <= deps.clock()) {
    throw new ApiError('expired_key', 'The API key has expired.');
  }
  if (!organization.apiKeysEnabled) {
    throw new ApiError('api_keys_disabled', 'API keys are disabled for this organization.');
  }
  if (key.kind !== 'organization') {
    throw new ApiError('org_scope_only_required', 'Only organization-scoped API keys are accepted.');
  }
  return { keyId: key.id, organizationId: organization.id, record };
}

async function lookup(deps: VerifyDeps, token: string): Promise<KeyRecord | null> {
  let digest: string;
  try {
    digest = digestToken(token, deps.digestKey.current());
  } catch {
    throw new ApiError('digest_key_unavailable', 'Key verification is temporarily unavailable.');
  }
  const now = deps.clock();
  const cached = deps.cache.get(digest, now);
  if (cached !== undefined) {
    deps.metrics?.keyCache.inc({ outcome: 'hit' });
    return cached;
  }
  deps.metrics?.keyCache.inc({ outcome: 'miss' });
  let found: KeyRecord | undefined;
  try {
    found = await findKeyByDigest(deps.store.db, digest);
  } catch {
    throw new ApiError('digest_key_unavailable', 'Key verification is temporarily unavailable.');
  }
  deps.cache.set(digest, found ?? null, now);
  return found ?? null;
}

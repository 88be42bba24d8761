/** Minting and changing API keys. The plain token exists only in the return value of `mintApiKey`. */

import { type DigestKeyProvider, digestSecretId, digestToken } from '../auth/digest.js';
import { generateToken, type TokenEnvironment } from '../auth/token.js';
import { SCOPES, type Scope } from '../contract/routes.js';
import type { Db } from '../database/connection.js';
import type { ApiKeyKind, ApiKeyState } from '../database/schema.js';
import { newId } from '../ids.js';
import { type ApiKey, getApiKey, insertApiKey, insertRolledKey, setApiKeyState } from '../store/apiKeys.js';
import { getOrganization } from '../store/organizations.js';
import { toIso } from '../time.js';
import { OperatorError } from './errors.js';

export interface MintKeyInput {
  organizationId: string;
  scopes: readonly string[];
  kind?: ApiKeyKind;
  environment?: TokenEnvironment;
  expiresAt?: number | null;
  createdBy: string;
}

export function parseScopes(scopes: readonly string[]): Scope[] {
  const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0) {
    throw new OperatorError(`unknown scope ${unknown.join(', ')}; scopes are ${SCOPES.join(', ')}`);
  }
  // Stored in the contract's order, without duplicates.
  return SCOPES.filter((s) => scopes.includes(s));
}

/** Creates a key and returns it with its token, which is shown this once and never stored. */
export async function mintApiKey(
  db: Db,
  digestKey: DigestKeyProvider,
  input: MintKeyInput,
  now: number,
): Promise<{ key: ApiKey; token: string }> {
  if (!(await getOrganization(db, input.organizationId))) {
    throw new OperatorError(`organization ${input.organizationId} does not exist`);
  }
  const environment = input.environment ?? 'live';
  const token = generateToken(environment);
  const secret = digestKey.current();
  const key: ApiKey = {
    id: newId('key'),
    organizationId: input.organizationId,
    environment,
    kind: input.kind ?? 'organization',
    scopes: parseScopes(input.scopes),
    state: 'active',
    expiresAt: input.expiresAt ?? null,
    createdAt: now,
    updatedAt: now,
    lastUsedAt: null,
    createdBy: input.createdBy,
    successorId: null,
    predecessorId: null,
    digestSecretId: digestSecretId(secret),
  };
  await insertApiKey(db, key, digestToken(token, secret));
  return { key, token };
}

/** Default grace of `eds key roll` (decisions.md, Rotation). */
export const DEFAULT_ROLL_GRACE_SECONDS = 86_400;

/**
 * Rolls a key: a successor with the same organization, kind, environment, scopes and expiry,
 * whose token is returned this once; the old key keeps working until `now + grace` (or its own
 * expiry, if sooner), then answers expired_key. Only an active key that was not rolled before
 * can be rolled; anything else changes nothing.
 */
export async function rollApiKey(
  db: Db,
  digestKey: DigestKeyProvider,
  input: { id: string; graceSeconds: number; createdBy: string },
  now: number,
): Promise<{ old: ApiKey; successor: ApiKey; token: string }> {
  if (!Number.isSafeInteger(input.graceSeconds) || input.graceSeconds < 0) {
    throw new OperatorError('--grace must be a whole number of seconds, 0 or more');
  }
  const old = await getApiKey(db, input.id);
  if (!old) throw new OperatorError(`API key ${input.id} does not exist`);
  rollable(old, now);
  const secret = digestKey.current();
  const token = generateToken(old.environment);
  const successor: ApiKey = {
    ...old,
    id: newId('key'),
    state: 'active',
    createdAt: now,
    updatedAt: now,
    lastUsedAt: null,
    createdBy: input.createdBy,
    successorId: null,
    predecessorId: old.id,
    digestSecretId: digestSecretId(secret),
  };
  const graceEnd = now + input.graceSeconds * 1000;
  const deadline = old.expiresAt === null ? graceEnd : Math.min(old.expiresAt, graceEnd);
  if (!(await insertRolledKey(db, { id: old.id, deadline, now }, successor, digestToken(token, secret)))) {
    // Someone else rolled, revoked or disabled it since it was read.
    const current = await getApiKey(db, old.id);
    if (current) rollable(current, now);
    throw new OperatorError(`API key ${old.id} changed while rolling it; nothing was changed`);
  }
  return {
    old: { ...old, successorId: successor.id, expiresAt: deadline, updatedAt: now },
    successor,
    token,
  };
}

function rollable(key: ApiKey, now: number): void {
  if (key.successorId !== null) {
    throw new OperatorError(
      `API key ${key.id} was already rolled (successor ${key.successorId}); roll that one`,
    );
  }
  if (key.state === 'revoked')
    throw new OperatorError(`API key ${key.id} is revoked; revoked keys cannot be rolled`);
  if (key.state === 'disabled') {
    throw new OperatorError(`API key ${key.id} is disabled; enable it first or create a new key`);
  }
  if (key.expiresAt !== null && key.expiresAt <= now) {
    throw new OperatorError(`API key ${key.id} has expired; create a new key instead`);
  }
}

/** revoked is final; disabled and active switch back and forth. */
export async function changeApiKeyState(db: Db, id: string, to: ApiKeyState, now: number): Promise<ApiKey> {
  const key = await getApiKey(db, id);
  if (!key) throw new OperatorError(`API key ${id} does not exist`);
  if (key.state === 'revoked' && to !== 'revoked') {
    throw new OperatorError(`API key ${id} is revoked; revocation is final`);
  }
  if (key.state !== to) await setApiKeyState(db, id, to, now);
  return { ...key, state: to, updatedAt: key.state !== to ? now : key.updatedAt };
}

/**
 * The key as an operator sees it: never the token or its digest. With the current digest
 * secret's fingerprint, also whether its digest is known to be made with the current secret.
 */
export function describeApiKey(key: ApiKey, currentSecretId?: string) {
  return {
    key_id: key.id,
    organization_id: key.organizationId,
    kind: key.kind,
    environment: key.environment,
    scopes: key.scopes,
    state: key.state,
    expires_at: key.expiresAt === null ? null : new Date(key.expiresAt).toISOString(),
    created_at: new Date(key.createdAt).toISOString(),
    last_used_at: key.lastUsedAt === null ? null : new Date(key.lastUsedAt).toISOString(),
    created_by: key.createdBy,
    rolled_to: key.successorId,
    rolled_from: key.predecessorId,
    /** For a rolled key: when it stops working (its successor takes over). */
    grace_ends_at: key.successorId !== null && key.expiresAt !== null ? toIso(key.expiresAt) : null,
    ...(currentSecretId === undefined
      ? {}
      : { digest_secret: key.digestSecretId === currentSecretId ? 'current' : 'previous_or_unknown' }),
  };
}

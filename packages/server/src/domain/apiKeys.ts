/** Minting and changing API keys. The plain token exists only in the return value of `mintApiKey`. */

import { type DigestKeyProvider, digestToken } from '../auth/digest.js';
import { generateToken, type TokenEnvironment } from '../auth/token.js';
import { SCOPES, type Scope } from '../contract/routes.js';
import { newId } from '../ids.js';
import { type ApiKey, getApiKey, insertApiKey, setApiKeyState } from '../store/apiKeys.js';
import type { Db } from '../store/database.js';
import { getOrganization } from '../store/organizations.js';
import type { ApiKeyKind, ApiKeyState } from '../store/schema.js';
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
  };
  await insertApiKey(db, key, digestToken(token, digestKey.current()));
  return { key, token };
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

/** The key as an operator sees it: never the token or its digest. */
export function describeApiKey(key: ApiKey) {
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
  };
}

import type { Scope } from '../contract/routes.js';
import { type Db, inTransaction } from '../database/connection.js';
import type { ApiKeyEnvironment, ApiKeyKind, ApiKeyRow, ApiKeyState } from '../database/schema.js';
import { notifyAuthChanged } from './authChanges.js';
import { type Organization, toOrganization } from './organizations.js';

export interface ApiKey {
  id: string;
  organizationId: string;
  environment: ApiKeyEnvironment;
  kind: ApiKeyKind;
  scopes: Scope[];
  state: ApiKeyState;
  expiresAt: number | null;
  createdAt: number;
  updatedAt: number;
  lastUsedAt: number | null;
  createdBy: string;
  /** Set once the key is rolled: its replacement; the grace deadline is `expiresAt`. */
  successorId: string | null;
  predecessorId: string | null;
  /** Fingerprint of the digest secret its stored digest was made with; null: not yet known. */
  digestSecretId: string | null;
}

export function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    organizationId: row.organization_id,
    environment: row.environment,
    kind: row.kind,
    scopes: JSON.parse(row.scopes) as Scope[],
    state: row.state,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastUsedAt: row.last_used_at,
    createdBy: row.created_by,
    successorId: row.successor_id,
    predecessorId: row.predecessor_id,
    digestSecretId: row.digest_secret_id,
  };
}

export async function insertApiKey(db: Db, key: ApiKey, digest: string): Promise<void> {
  await db
    .insertInto('api_keys')
    .values({
      id: key.id,
      organization_id: key.organizationId,
      digest,
      environment: key.environment,
      kind: key.kind,
      scopes: JSON.stringify(key.scopes),
      state: key.state,
      expires_at: key.expiresAt,
      created_at: key.createdAt,
      updated_at: key.updatedAt,
      last_used_at: key.lastUsedAt,
      created_by: key.createdBy,
      successor_id: key.successorId,
      predecessor_id: key.predecessorId,
      digest_secret_id: key.digestSecretId,
    })
    .execute();
}

/**
 * The one lookup authentication makes: the key by digest, with its organization. During a
 * digest-secret rotation an unknown current digest is looked up again together with the previous
 * one (both in one statement, so a concurrent re-digest cannot slip between two reads); `digest`
 * is the stored digest that matched.
 */
export async function findKeyByDigest(
  db: Db,
  digests: string | readonly string[],
): Promise<{ key: ApiKey; organization: Organization; digest: string } | undefined> {
  const row = await db
    .selectFrom('api_keys as k')
    .innerJoin('organizations as o', 'o.id', 'k.organization_id')
    .selectAll('k')
    .select([
      'o.name as org_name',
      'o.allowlisted as org_allowlisted',
      'o.routes as org_routes',
      'o.api_keys_enabled as org_api_keys_enabled',
      'o.created_at as org_created_at',
      'o.updated_at as org_updated_at',
      'o.rate_limit_per_key as org_rate_limit_per_key',
    ])
    .$if(typeof digests === 'string', (q) => q.where('k.digest', '=', digests as string))
    .$if(typeof digests !== 'string', (q) => q.where('k.digest', 'in', [...digests]))
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    digest: row.digest,
    key: toApiKey(row),
    organization: toOrganization({
      id: row.organization_id,
      name: row.org_name,
      allowlisted: row.org_allowlisted,
      routes: row.org_routes,
      api_keys_enabled: row.org_api_keys_enabled,
      created_at: row.org_created_at,
      updated_at: row.org_updated_at,
      rate_limit_per_key: row.org_rate_limit_per_key,
    }),
  };
}

export async function getApiKey(db: Db, id: string): Promise<ApiKey | undefined> {
  const row = await db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toApiKey(row);
}

export async function listApiKeys(db: Db, organizationId: string): Promise<ApiKey[]> {
  const rows = await db
    .selectFrom('api_keys')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toApiKey);
}

export async function setApiKeyState(db: Db, id: string, state: ApiKeyState, now: number): Promise<void> {
  await inTransaction(db, async (tx) => {
    await tx.updateTable('api_keys').set({ state, updated_at: now }).where('id', '=', id).execute();
    await notifyAuthChanged(tx);
  });
}

/**
 * Moves a key's stored digest to the current secret, only if it still holds `from`: of two
 * processes doing it at once one moves it (true) and the other finds it moved (false); neither
 * can overwrite a later change.
 */
export async function redigestApiKey(
  db: Db,
  id: string,
  from: string,
  to: { digest: string; secretId: string },
): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ digest: to.digest, digest_secret_id: to.secretId })
    .where('id', '=', id)
    .where('digest', '=', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Records which secret made a key's digest, for keys stored before that was recorded. */
export async function stampDigestSecret(db: Db, id: string, digest: string, secretId: string): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ digest_secret_id: secretId })
    .where('id', '=', id)
    .where('digest', '=', digest)
    .execute();
}

/**
 * Keys that may still depend on a digest secret other than `currentSecretId`: usable ones (not
 * revoked, not expired) whose digest is not known to be the current secret's.
 */
export async function countKeysOffCurrentSecret(
  db: Db,
  currentSecretId: string,
  now: number,
  organizationId?: string,
): Promise<number> {
  const row = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('state', '!=', 'revoked')
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .where((eb) => eb.or([eb('digest_secret_id', 'is', null), eb('digest_secret_id', '!=', currentSecretId)]))
    .$if(organizationId !== undefined, (q) => q.where('organization_id', '=', organizationId as string))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Rolls a key: inserts the successor and marks the old key rolled, with its grace deadline as
 * its expiry, in one transaction. The update holds only while the old key is still active and
 * not rolled, so two rolls at once cannot both succeed (the loser's successor is rolled back).
 */
export async function insertRolledKey(
  db: Db,
  old: { id: string; deadline: number; now: number },
  successor: ApiKey,
  digest: string,
): Promise<boolean> {
  return inTransaction(db, async (tx) => {
    const result = await tx
      .updateTable('api_keys')
      .set({ successor_id: successor.id, expires_at: old.deadline, updated_at: old.now })
      .where('id', '=', old.id)
      .where('state', '=', 'active')
      .where('successor_id', 'is', null)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return false;
    await insertApiKey(tx, successor, digest);
    await notifyAuthChanged(tx);
    return true;
  });
}

/** Last-used times, written in batches off the request path. */
export async function touchApiKeys(db: Db, usedAt: ReadonlyMap<string, number>): Promise<void> {
  if (usedAt.size === 0) return;
  await inTransaction(db, async (tx) => {
    for (const [id, at] of usedAt) {
      await tx.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
    }
  });
}

import type { Scope } from '../contract/routes.js';
import { notifyAuthChanged } from './authChanges.js';
import { type Db, inTransaction } from './database.js';
import { type Organization, toOrganization } from './organizations.js';
import type { ApiKeyEnvironment, ApiKeyKind, ApiKeyRow, ApiKeyState } from './schema.js';

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
    })
    .execute();
}

/** The one lookup authentication makes: the key by digest, with its organization. */
export async function findKeyByDigest(
  db: Db,
  digest: string,
): Promise<{ key: ApiKey; organization: Organization } | undefined> {
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
    .where('k.digest', '=', digest)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
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

/** Last-used times, written in batches off the request path. */
export async function touchApiKeys(db: Db, usedAt: ReadonlyMap<string, number>): Promise<void> {
  if (usedAt.size === 0) return;
  await inTransaction(db, async (tx) => {
    for (const [id, at] of usedAt) {
      await tx.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
    }
  });
}

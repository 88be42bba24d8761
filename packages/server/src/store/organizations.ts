import type { RouteGroup } from '../contract/routes.js';
import { type Db, inTransaction } from '../database/connection.js';
import type { OrganizationRow } from '../database/schema.js';
import { notifyAuthChanged } from './authChanges.js';

export interface Organization {
  id: string;
  name: string;
  allowlisted: boolean;
  routes: RouteGroup[];
  apiKeysEnabled: boolean;
  createdAt: number;
  updatedAt: number;
  /** Requests a second per key; null: the deployment's EDS_RATE_LIMIT_PER_KEY. */
  rateLimitPerKey: number | null;
}

export function toOrganization(row: OrganizationRow): Organization {
  return {
    id: row.id,
    name: row.name,
    allowlisted: row.allowlisted === 1,
    routes: JSON.parse(row.routes) as RouteGroup[],
    apiKeysEnabled: row.api_keys_enabled === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    rateLimitPerKey: row.rate_limit_per_key,
  };
}

export async function getOrganization(db: Db, id: string): Promise<Organization | undefined> {
  const row = await db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toOrganization(row);
}

/** Inserts or replaces by id (imports are idempotent). */
export async function upsertOrganization(
  db: Db,
  org: Omit<Organization, 'createdAt' | 'rateLimitPerKey'> & { createdAt?: number },
) {
  const row = {
    id: org.id,
    name: org.name,
    allowlisted: org.allowlisted ? 1 : 0,
    routes: JSON.stringify(org.routes),
    api_keys_enabled: org.apiKeysEnabled ? 1 : 0,
    created_at: org.createdAt ?? org.updatedAt,
    updated_at: org.updatedAt,
  } as const;
  await inTransaction(db, async (tx) => {
    await tx
      .insertInto('organizations')
      .values(row)
      .onConflict((oc) =>
        oc.column('id').doUpdateSet({
          name: row.name,
          allowlisted: row.allowlisted,
          routes: row.routes,
          api_keys_enabled: row.api_keys_enabled,
          updated_at: row.updated_at,
        }),
      )
      .execute();
    await notifyAuthChanged(tx);
  });
}

export async function updateOrganizationSettings(
  db: Db,
  id: string,
  changes: {
    allowlisted?: boolean;
    routes?: RouteGroup[];
    apiKeysEnabled?: boolean;
    /** null: back to the deployment's rate. */
    rateLimitPerKey?: number | null;
  },
  now: number,
): Promise<Organization | undefined> {
  const set: Partial<OrganizationRow> = { updated_at: now };
  if (changes.allowlisted !== undefined) set.allowlisted = changes.allowlisted ? 1 : 0;
  if (changes.routes !== undefined) set.routes = JSON.stringify(changes.routes);
  if (changes.apiKeysEnabled !== undefined) set.api_keys_enabled = changes.apiKeysEnabled ? 1 : 0;
  if (changes.rateLimitPerKey !== undefined) set.rate_limit_per_key = changes.rateLimitPerKey;
  await inTransaction(db, async (tx) => {
    await tx.updateTable('organizations').set(set).where('id', '=', id).execute();
    await notifyAuthChanged(tx);
  });
  return getOrganization(db, id);
}

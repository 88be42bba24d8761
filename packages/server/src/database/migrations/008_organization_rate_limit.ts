import type { Kysely } from 'kysely';

/**
 * An organization's own rate for its keys (requests a second per key), set by
 * `eds org update ID --rate-limit N`; NULL follows the deployment's EDS_RATE_LIMIT_PER_KEY.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('organizations').addColumn('rate_limit_per_key', 'integer').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('organizations').dropColumn('rate_limit_per_key').execute();
}

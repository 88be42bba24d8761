import { type Kysely, sql } from 'kysely';
import { atomically, isSqlite } from './dialect.js';

/**
 * Each organization's number of listable encounters, the `total` of every list page without a
 * created_at window. Summing the per-day roll-up cost about 25 µs a page on SQLite at 1,000,000
 * encounters over 392 days (each day a step of the index and a read of its row), against 32 µs
 * for reading the page's 50 summaries; one row read by key costs a few. Kept exact in the same
 * transaction as the day counts; built here from them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await atomically(db, upSteps);
}

async function upSteps(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('encounter_counts')
    .addColumn('organization_id', 'text', (col) => col.primaryKey())
    .addColumn('count', 'integer', (col) => col.notNull())
    .execute();
  // An import of the release before this one, still running, would change day counts without
  // their totals: on PostgreSQL it waits for this transaction, or this one for it (on SQLite the
  // transaction holds the one write lock). operations.md says to stop imports to upgrade.
  if (!isSqlite(db)) await sql`LOCK TABLE encounter_day_counts IN SHARE MODE`.execute(db);
  await sql`INSERT INTO encounter_counts (organization_id, count)
    SELECT organization_id, sum(count) FROM encounter_day_counts GROUP BY organization_id`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('encounter_counts').execute();
}

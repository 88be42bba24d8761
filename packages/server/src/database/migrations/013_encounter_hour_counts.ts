import { type Kysely, sql } from 'kysely';
import { atomically, isSqlite } from './dialect.js';

/**
 * Each organization's listable encounters per hour (floor(created_at / 3,600,000)), beside the
 * per-day roll-up and kept exact in the same transaction. A deep list offset lands in a day by the
 * day roll-up; on a busy day (thousands of encounters) the hours then say where in the day, so the
 * page skips at most an hour's entries instead of a day's. Built here from the encounters.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await atomically(db, upSteps);
}

async function upSteps(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('encounter_hour_counts')
    .addColumn('organization_id', 'text', (col) => col.notNull())
    .addColumn('hour', 'integer', (col) => col.notNull())
    .addColumn('count', 'integer', (col) => col.notNull())
    .addPrimaryKeyConstraint('encounter_hour_counts_pk', ['organization_id', 'hour'])
    .execute();
  // An import of the release before this one, still running, would change encounters without
  // their hours: on PostgreSQL it waits for this transaction, or this one for it (on SQLite the
  // transaction holds the one write lock). operations.md says to stop imports to upgrade.
  if (!isSqlite(db)) await sql`LOCK TABLE encounters IN SHARE MODE`.execute(db);
  await sql`INSERT INTO encounter_hour_counts (organization_id, hour, count)
    SELECT organization_id, floor(created_at / 3600000.0), count(*) FROM encounters
    WHERE demo_training = 0 GROUP BY organization_id, floor(created_at / 3600000.0)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('encounter_hour_counts').execute();
}

import { type Kysely, sql } from 'kysely';
import { atomically } from './dialect.js';

/**
 * Each row of the per-day roll-up also holds `earlier`: the organization's listable encounters on
 * all its earlier days. A window's whole days are then two lookups (the `earlier` where they end
 * less the one where they start) instead of a sum over every day between, and the day a deep list
 * offset lands in is one search of the index below instead of a walk over the days before it.
 * Built here from the day counts, which the same transaction keeps exact.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await atomically(db, upSteps);
}

async function upSteps(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('encounter_day_counts')
    .addColumn('earlier', 'integer', (col) => col.notNull().defaultTo(0))
    .execute();
  // On PostgreSQL the ALTER holds the table to the end of the transaction, so an import of the
  // release before this one, still running, waits for it (on SQLite the transaction holds the one
  // write lock); one writing later leaves totals that `eds migrate` finds and rebuilds.
  await sql`UPDATE encounter_day_counts SET earlier = running.earlier
    FROM (
      SELECT organization_id, day,
        sum(count) OVER (PARTITION BY organization_id ORDER BY day) - count AS earlier
      FROM encounter_day_counts
    ) AS running
    WHERE encounter_day_counts.organization_id = running.organization_id
      AND encounter_day_counts.day = running.day`.execute(db);
  await db.schema
    .createIndex('encounter_day_counts_earlier')
    .on('encounter_day_counts')
    .columns(['organization_id', 'earlier', 'day'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await atomically(db, async (tx) => {
    await tx.schema.dropIndex('encounter_day_counts_earlier').execute();
    await tx.schema.alterTable('encounter_day_counts').dropColumn('earlier').execute();
  });
}

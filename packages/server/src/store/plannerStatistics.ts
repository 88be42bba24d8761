/**
 * After a bulk load the query planner's statistics describe the tables as they were: PostgreSQL
 * without them estimated one row for a list over 10,000 encounters (and autovacuum may be off,
 * or a minute away); SQLite plans from sqlite_stat1. Refreshed once at the end of a large load.
 */
import { sql } from 'kysely';
import type { Store } from './database.js';

/** Loads smaller than this are left to autovacuum (PostgreSQL) and the next optimize. */
export const BULK_LOAD_ROWS = 10_000;

const LOADED_TABLES = [
  'organizations',
  'patients',
  'encounters',
  'encounter_day_counts',
  'documents',
  'transcripts',
  'recordings',
];

export async function refreshPlannerStatistics(store: Pick<Store, 'db' | 'dialect'>): Promise<void> {
  if (store.dialect === 'postgres') {
    await sql`ANALYZE ${sql.join(LOADED_TABLES.map((t) => sql.table(t)))}`.execute(store.db);
  } else {
    await sql`PRAGMA optimize`.execute(store.db);
  }
}

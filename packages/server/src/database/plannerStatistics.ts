/**
 * After a bulk load the query planner's statistics describe the tables as they were: PostgreSQL
 * without them estimated one row for a list over 10,000 encounters (and autovacuum may be off,
 * or a minute away); SQLite plans from sqlite_stat1. Refreshed once at the end of a large load.
 * On PostgreSQL this is VACUUM (ANALYZE): until a vacuum marks the new pages all-visible, an
 * index-only scan still visits the table for every entry, and the list's deep offsets (which
 * skip 10,000 index entries) ran at 144 req/s instead of 571 on a freshly loaded million.
 */
import { sql } from 'kysely';
import type { Logger } from '../logger.js';
import type { Store } from './connection.js';

/** Loads smaller than this are left to autovacuum (PostgreSQL) and the next optimize. */
export const BULK_LOAD_ROWS = 10_000;

const LOADED_TABLES = [
  'organizations',
  'patients',
  'encounters',
  'encounter_day_counts',
  'encounter_counts',
  'documents',
  'transcripts',
  'recordings',
];

/**
 * Runs after the load has committed, so a failure here must not fail the command (the rows are
 * in; re-running the import would collide with them): it is logged and the next autovacuum or
 * optimize catches up. On PostgreSQL the pool's statement timeout is lifted for it: a vacuum of a
 * table of several gigabytes can take longer than a request may.
 */
export async function refreshPlannerStatistics(
  store: Pick<Store, 'db' | 'dialect'>,
  logger: Pick<Logger, 'warn'>,
): Promise<void> {
  try {
    if (store.dialect === 'postgres') {
      // VACUUM cannot run in a transaction: one pooled connection, its timeout lifted and put back.
      await store.db.connection().execute(async (connection) => {
        await sql`SET statement_timeout = 0`.execute(connection);
        try {
          await sql`VACUUM (ANALYZE) ${sql.join(LOADED_TABLES.map((t) => sql.table(t)))}`.execute(connection);
        } finally {
          await sql`RESET statement_timeout`.execute(connection);
        }
      });
    } else {
      await sql`PRAGMA optimize`.execute(store.db);
    }
  } catch (error) {
    logger.warn(
      { err: { message: (error as Error).message } },
      'could not refresh planner statistics after the load; the data is stored',
    );
  }
}

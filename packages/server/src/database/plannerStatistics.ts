/**
 * After a bulk load the query planner's statistics describe the tables as they were: PostgreSQL
 * without them estimated one row for a list over 10,000 encounters (and autovacuum may be off,
 * or a minute away); SQLite plans from sqlite_stat1. Refreshed once at the end of a large load.
 * On PostgreSQL this is VACUUM (ANALYZE): until a vacuum marks the new pages all-visible, an
 * index-only scan still visits the table for every entry, and the list's deep offsets (which
 * skip 10,000 index entries) ran at 144 req/s instead of 571 on a freshly loaded million.
 */
import { type RawBuilder, sql } from 'kysely';
import type { Logger } from '../logger.js';
import type { Store } from './connection.js';

/** Loads smaller than this are left to autovacuum (PostgreSQL) and the next optimize. */
export const BULK_LOAD_ROWS = 10_000;

/** Every table a load writes, the read model's included. */
const LOADED_TABLES = [
  'organizations',
  'patients',
  'encounters',
  'encounter_day_counts',
  'encounter_hour_counts',
  'encounter_counts',
  'documents',
  'transcripts',
  'recordings',
  'encounter_reads',
  'document_reads',
];

type StatisticsStore = Pick<Store, 'db' | 'dialect'>;

/**
 * Runs after the load has committed, so a failure here must not fail the command (the rows are
 * in; re-running the import would collide with them): it is logged and the next autovacuum or
 * optimize catches up. On PostgreSQL the pool's statement timeout is lifted for it: a vacuum of a
 * table of several gigabytes can take longer than a request may.
 */
export async function refreshPlannerStatistics(
  store: StatisticsStore,
  logger: Pick<Logger, 'warn'>,
): Promise<void> {
  try {
    if (store.dialect === 'postgres') {
      // VACUUM cannot run in a transaction.
      await withoutStatementTimeout(store, sql`VACUUM (ANALYZE) ${loadedTables()}`);
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

/**
 * Statistics kept up while a load written in many transactions (the demo's batches) runs on
 * PostgreSQL. Tables that were empty when the load began have none, and without them the planner
 * read each batch's documents by encounter with a scan of the whole `documents` table: every batch
 * slower than the one before, a million encounters in 21 minutes instead of 11 (docs/benchmarks.md,
 * Import and demo generation). So the loaded tables are analyzed (a sample, not a vacuum) each time
 * the rows written since the last analyze reach the rows written before it, from BULK_LOAD_ROWS on:
 * about ten analyzes for a million encounters. Called between transactions: an ANALYZE inside one
 * would hold its lock until the commit. SQLite plans these reads by their indexes without
 * statistics; nothing to do there.
 */
export class LoadStatistics {
  private written = 0;
  private nextAt: number;

  constructor(
    private readonly store: StatisticsStore,
    private readonly logger: Pick<Logger, 'warn'>,
    firstAt = BULK_LOAD_ROWS,
  ) {
    this.nextAt = firstAt;
  }

  /** Counts a committed transaction's rows; analyzes when the schedule says so. */
  async committed(rows: number): Promise<void> {
    if (this.store.dialect !== 'postgres') return;
    this.written += rows;
    if (this.written < this.nextAt) return;
    this.nextAt = this.written * 2;
    try {
      await withoutStatementTimeout(this.store, sql`ANALYZE ${loadedTables()}`);
    } catch (error) {
      // A slower load, not a failed one.
      this.logger.warn(
        { err: { message: (error as Error).message } },
        'could not refresh planner statistics during the load; the load goes on',
      );
    }
  }
}

function loadedTables() {
  return sql.join(LOADED_TABLES.map((t) => sql.table(t)));
}

/** One pooled connection with its statement timeout lifted for the statement, and put back. */
async function withoutStatementTimeout(store: StatisticsStore, statement: RawBuilder<unknown>) {
  await store.db.connection().execute(async (connection) => {
    await sql`SET statement_timeout = 0`.execute(connection);
    try {
      await statement.execute(connection);
    } finally {
      await sql`RESET statement_timeout`.execute(connection);
    }
  });
}

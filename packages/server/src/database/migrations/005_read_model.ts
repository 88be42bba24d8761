import { type Kysely, sql } from 'kysely';
import { isSqlite } from './dialect.js';

/**
 * The read model's tables (readModel/write/): each encounter's summary, each document's detail
 * and each finalized transcript as the exact bytes the API sends, with their entity tags. Kept by
 * every write of clinical data; the stored answers of data written before these tables existed
 * are built by the step `eds migrate` runs after the migrations (upgradeStore.ts), with the views
 * of the release that runs it.
 *
 * The list reads a range of `encounter_reads` in the contract's order. On SQLite the table is
 * that order (WITHOUT ROWID, keyed by organization, demo flag, created_at, encounter ID), so the
 * range scan reads the summaries themselves and nothing else; the detail route finds its row
 * through a unique index on the encounter ID. On PostgreSQL the table is keyed by encounter ID
 * and the list walks an index in the contract's order, fetching each of the page's rows (a
 * B-tree entry cannot hold a summary of any size).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const ms = 'bigint' as const;
  const sqlite = isSqlite(db);
  let encounters = db.schema
    .createTable('encounter_reads')
    .addColumn('encounter_id', 'text', (c) => (sqlite ? c.notNull() : c.primaryKey()))
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('demo_training', 'integer', (c) => c.notNull())
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('patient_id', 'text', (c) => c.notNull())
    .addColumn('summary', 'text', (c) => c.notNull())
    .addColumn('etag', 'text', (c) => c.notNull());
  if (sqlite) {
    encounters = encounters
      .addPrimaryKeyConstraint('encounter_reads_list', [
        'organization_id',
        'demo_training',
        'created_at',
        'encounter_id',
      ])
      .modifyEnd(sql`without rowid`);
  }
  await encounters.execute();
  if (sqlite) {
    await db.schema
      .createIndex('encounter_reads_id')
      .unique()
      .on('encounter_reads')
      .column('encounter_id')
      .execute();
  } else {
    await db.schema
      .createIndex('encounter_reads_list')
      .on('encounter_reads')
      .columns(['organization_id', 'demo_training', 'created_at', 'encounter_id'])
      .execute();
  }

  await db.schema
    .createTable('document_reads')
    .addColumn('document_id', 'text', (c) => c.primaryKey())
    .addColumn('encounter_id', 'text', (c) => c.notNull())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('schema_type', 'text', (c) => c.notNull())
    .addColumn('detail', 'text')
    .addColumn('detail_etag', 'text')
    .addColumn('transcript', 'text')
    .addColumn('transcript_etag', 'text')
    .execute();

  // A patient's change rewrites the summaries of its encounters: found by this index, not a scan.
  await db.schema.createIndex('encounters_patient').on('encounters').column('patient_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('encounters_patient').execute();
  await db.schema.dropTable('document_reads').execute();
  await db.schema.dropTable('encounter_reads').execute();
}

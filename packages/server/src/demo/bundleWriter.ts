/**
 * Writes demo batches. On PostgreSQL (and any store without a raw SQLite handle) through the
 * store's batch writers, a transaction per batch, with the planner's statistics kept up as the
 * tables grow (LoadStatistics); on SQLite through prepared single-row upserts in one synchronous
 * transaction per batch, which is what makes a million encounters load in minutes. The SQLite
 * path leaves the count roll-ups (days, their running totals, hours, the total) and the read model
 * to `finish`, which rebuilds them once per organization.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { Insertable } from 'kysely';
import { endReadSnapshot, type Store } from '../database/connection.js';
import { LoadStatistics } from '../database/plannerStatistics.js';
import type { PatientsTable } from '../database/schema.js';
import type { Logger } from '../logger.js';
import { applyReadModelChanges } from '../readModel/write/changes.js';
import { rebuildReadModel } from '../readModel/write/rebuild.js';
import {
  rebuildEncounterCounts,
  upsertDocuments,
  upsertEncounters,
  upsertPatients,
  upsertRecordings,
  upsertTranscripts,
} from '../store/clinicalWrites.js';
import type { EncounterBundle } from './generator.js';

export interface BundleWriter {
  patients(rows: Insertable<PatientsTable>[]): Promise<void>;
  encounters(bundles: readonly EncounterBundle[]): Promise<void>;
  /** Called once an organization's encounters are all written. */
  finish(organizationId: string): Promise<void>;
}

/** Encounters (or patients) per SQLite transaction. */
const ROWS_PER_COMMIT = 100_000;

export function createBundleWriter(store: Store, logger: Pick<Logger, 'warn'>): BundleWriter {
  return store.sqlite
    ? sqliteWriter(store, store.sqlite)
    : kyselyWriter(store, new LoadStatistics(store, logger));
}

function kyselyWriter(store: Store, statistics: LoadStatistics): BundleWriter {
  const db = store.db;
  return {
    patients: async (rows) => {
      await db.transaction().execute(async (tx) => {
        await upsertPatients(tx, rows);
        await applyReadModelChanges(tx, { patients: rows.map((r) => r.id) });
      });
      await statistics.committed(rows.length);
    },
    encounters: async (bundles) => {
      await db.transaction().execute(async (tx) => {
        await upsertEncounters(
          tx,
          bundles.map((b) => b.encounter),
        );
        await upsertDocuments(
          tx,
          bundles.flatMap((b) => b.documents),
        );
        // Seed data, not a finalization happening now: no transcript_ready events.
        await upsertTranscripts(
          tx,
          bundles.flatMap((b) => b.transcripts),
        );
        await upsertRecordings(
          tx,
          bundles.flatMap((b) => b.recordings),
        );
        await applyReadModelChanges(tx, {
          encounters: bundles.map((b) => b.encounter.id),
          documents: bundles.flatMap((b) => b.documents.map((d) => d.id)),
        });
      });
      await statistics.committed(bundles.reduce((rows, b) => rows + bundleRows(b), 0));
    },
    finish: async () => {},
  };
}

/** About the rows an encounter's bundle writes, its stored answers included. */
function bundleRows(bundle: EncounterBundle): number {
  const { documents, transcripts, recordings } = bundle;
  return 2 + 2 * documents.length + transcripts.length + recordings.length;
}

/** `INSERT … ON CONFLICT (key) DO UPDATE SET` the other columns: the same upsert as the writers. */
function upsert(
  sqlite: BetterSqlite3.Database,
  table: string,
  key: string,
  columns: readonly string[],
  keepOnConflict: readonly string[] = [],
) {
  const updates = columns.filter((c) => c !== key && !keepOnConflict.includes(c));
  return sqlite.prepare(
    `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map((c) => `@${c}`).join(', ')}) ` +
      `ON CONFLICT (${key}) DO UPDATE SET ${updates.map((c) => `${c} = excluded.${c}`).join(', ')}`,
  );
}

function sqliteWriter(store: Store, sqlite: BetterSqlite3.Database): BundleWriter {
  const patient = upsert(
    sqlite,
    'patients',
    'id',
    ['id', 'organization_id', 'first_name', 'last_name', 'date_of_birth', 'created_at', 'updated_at'],
    ['created_at'],
  );
  const encounter = upsert(sqlite, 'encounters', 'id', [
    'id',
    'organization_id',
    'patient_id',
    'encounter_type',
    'status',
    'date_of_service',
    'created_at',
    'updated_at',
    'demo_training',
  ]);
  const document = upsert(
    sqlite,
    'documents',
    'id',
    [
      'id',
      'encounter_id',
      'organization_id',
      'schema_type',
      'title',
      'status',
      'workflow_variant',
      'audio_duration_seconds',
      'content_format',
      'content_text',
      'created_at',
      'updated_at',
    ],
    ['created_at'],
  );
  const transcript = upsert(sqlite, 'transcripts', 'document_id', [
    'document_id',
    'finalized',
    'provider',
    'audio_duration_seconds',
    'turns',
    'finalized_at',
  ]);
  const recording = upsert(sqlite, 'recordings', 'document_id', [
    'document_id',
    'object_key',
    'content_type',
    'byte_size',
  ]);
  const writePatients = (rows: Insertable<PatientsTable>[]) => {
    for (const row of rows) patient.run(row);
  };
  const writeEncounters = (bundles: readonly EncounterBundle[]) => {
    for (const b of bundles) encounter.run(b.encounter);
    for (const b of bundles) for (const row of b.documents) document.run(row);
    for (const b of bundles) for (const row of b.transcripts) transcript.run(row);
    for (const b of bundles) for (const row of b.recordings) recording.run(row);
  };
  // Rows with random-looking keys land all over each index, so every commit rewrites most index
  // pages; committing every ROWS_PER_COMMIT rows instead of every batch keeps that cost linear.
  let open = false;
  let uncommitted = 0;
  const inTransaction = (rows: number, write: () => void) => {
    if (!open) sqlite.exec('BEGIN');
    open = true;
    try {
      write();
    } catch (error) {
      sqlite.exec('ROLLBACK');
      open = false;
      throw error;
    }
    uncommitted += rows;
    if (uncommitted >= ROWS_PER_COMMIT) commit();
  };
  const commit = () => {
    if (open) sqlite.exec('COMMIT');
    endReadSnapshot(store.db);
    open = false;
    uncommitted = 0;
  };
  return {
    patients: async (rows) => inTransaction(rows.length, () => writePatients(rows)),
    encounters: async (bundles) => inTransaction(bundles.length, () => writeEncounters(bundles)),
    finish: async (organizationId) => {
      commit();
      await store.db.transaction().execute((tx) => rebuildEncounterCounts(tx, organizationId));
      await rebuildReadModel(store.db, organizationId);
    },
  };
}

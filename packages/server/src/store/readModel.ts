/**
 * The read model's SQL: reading the normalized rows a stored answer is built from, writing the
 * stored answers, and the routes' reads of them. What the bytes say is decided in
 * domain/readModel.ts; this module only moves rows.
 */
import type SQLite from 'better-sqlite3';
import { type Kysely, sql } from 'kysely';
import { PUBLIC_SCHEMA_TYPES } from '../contract/documentTypes.js';
import { chunks } from './clinicalWrites.js';
import { type Db, sqliteHandleOf } from './database.js';
import { ownFlag } from './encounterAccess.js';
import { preparedQuery } from './preparedQuery.js';
import type {
  Database,
  DocumentReadsTable,
  DocumentRow,
  EncounterReadsTable,
  EncounterRow,
  PatientRow,
  TranscriptRow,
} from './schema.js';

type Tx = Kysely<Database>;

// ---------------------------------------------------------------------------------------------
// Sources: the normalized rows behind stored answers.

export interface EncounterSource {
  encounter: EncounterRow;
  /** Undefined only if the patient row is missing (imports refuse that). */
  patient: PatientRow | undefined;
}

export async function encounterSources(tx: Tx, encounterIds: readonly string[]): Promise<EncounterSource[]> {
  const out: EncounterSource[] = [];
  for (const batch of chunks(encounterIds)) {
    const rows = await tx
      .selectFrom('encounters as e')
      .leftJoin('patients as p', (join) =>
        join.onRef('p.id', '=', 'e.patient_id').onRef('p.organization_id', '=', 'e.organization_id'),
      )
      .select([
        'e.id',
        'e.organization_id',
        'e.patient_id',
        'e.encounter_type',
        'e.status',
        'e.date_of_service',
        'e.created_at',
        'e.updated_at',
        'e.demo_training',
        'p.id as p_id',
        'p.first_name as p_first_name',
        'p.last_name as p_last_name',
        'p.date_of_birth as p_date_of_birth',
        'p.created_at as p_created_at',
        'p.updated_at as p_updated_at',
      ])
      .where('e.id', 'in', batch)
      .execute();
    for (const r of rows) {
      out.push({
        encounter: {
          id: r.id,
          organization_id: r.organization_id,
          patient_id: r.patient_id,
          encounter_type: r.encounter_type,
          status: r.status,
          date_of_service: Number(r.date_of_service),
          created_at: Number(r.created_at),
          updated_at: Number(r.updated_at),
          demo_training: r.demo_training,
        },
        patient:
          r.p_id === null
            ? undefined
            : {
                id: r.p_id,
                organization_id: r.organization_id,
                first_name: r.p_first_name as string,
                last_name: r.p_last_name as string,
                date_of_birth: r.p_date_of_birth as string,
                created_at: Number(r.p_created_at),
                updated_at: Number(r.p_updated_at),
              },
      });
    }
  }
  return out;
}

export type DocumentSummarySource = Pick<
  DocumentRow,
  'id' | 'encounter_id' | 'schema_type' | 'title' | 'status' | 'workflow_variant' | 'audio_duration_seconds'
>;

/** Public documents of the encounters, by encounter, each list in created_at (then id) order. */
export async function documentSummarySources(
  tx: Tx,
  encounterIds: readonly string[],
): Promise<Map<string, DocumentSummarySource[]>> {
  const byEncounter = new Map<string, DocumentSummarySource[]>();
  for (const batch of chunks(encounterIds)) {
    const rows = await tx
      .selectFrom('documents as d')
      .innerJoin('encounters as e', (join) =>
        join.onRef('e.id', '=', 'd.encounter_id').onRef('e.organization_id', '=', 'd.organization_id'),
      )
      .select([
        'd.id',
        'd.encounter_id',
        'd.schema_type',
        'd.title',
        'd.status',
        'd.workflow_variant',
        'd.audio_duration_seconds',
      ])
      .where('d.encounter_id', 'in', batch)
      .where('d.schema_type', 'in', PUBLIC_SCHEMA_TYPES)
      .orderBy('d.encounter_id')
      .orderBy('d.created_at')
      .orderBy('d.id')
      .execute();
    for (const row of rows) {
      const list = byEncounter.get(row.encounter_id);
      if (list) list.push(row);
      else byEncounter.set(row.encounter_id, [row]);
    }
  }
  return byEncounter;
}

export interface DocumentSource {
  document: DocumentRow;
  transcript: TranscriptRow | undefined;
}

export async function documentSources(tx: Tx, documentIds: readonly string[]): Promise<DocumentSource[]> {
  const out: DocumentSource[] = [];
  for (const batch of chunks(documentIds)) {
    const rows = await tx
      .selectFrom('documents as d')
      .leftJoin('transcripts as t', 't.document_id', 'd.id')
      .select([
        'd.id',
        'd.encounter_id',
        'd.organization_id',
        'd.schema_type',
        'd.title',
        'd.status',
        'd.workflow_variant',
        'd.audio_duration_seconds',
        'd.content_format',
        'd.content_text',
        'd.created_at',
        'd.updated_at',
        't.document_id as t_document_id',
        't.finalized as t_finalized',
        't.provider as t_provider',
        't.audio_duration_seconds as t_audio_duration_seconds',
        't.turns as t_turns',
        't.finalized_at as t_finalized_at',
      ])
      .where('d.id', 'in', batch)
      .execute();
    for (const r of rows) {
      out.push({
        document: {
          id: r.id,
          encounter_id: r.encounter_id,
          organization_id: r.organization_id,
          schema_type: r.schema_type,
          title: r.title,
          status: r.status,
          workflow_variant: r.workflow_variant,
          audio_duration_seconds: r.audio_duration_seconds,
          content_format: r.content_format,
          content_text: r.content_text,
          created_at: Number(r.created_at),
          updated_at: Number(r.updated_at),
        },
        transcript:
          r.t_document_id === null
            ? undefined
            : {
                document_id: r.t_document_id,
                finalized: r.t_finalized as TranscriptRow['finalized'],
                provider: r.t_provider,
                audio_duration_seconds: r.t_audio_duration_seconds,
                turns: r.t_turns as string,
                finalized_at: r.t_finalized_at === null ? null : Number(r.t_finalized_at),
              },
      });
    }
  }
  return out;
}

/** Encounters whose summary shows one of these patients. */
export async function encounterIdsOfPatients(tx: Tx, patientIds: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const batch of chunks(patientIds)) {
    const rows = await tx.selectFrom('encounters').select('id').where('patient_id', 'in', batch).execute();
    for (const r of rows) out.push(r.id);
  }
  return out;
}

/**
 * Encounters whose summary lists (or listed) one of these documents: its encounter now and, for
 * a document a re-import moved, the one its stored answer still names.
 */
export async function encounterIdsOfDocuments(tx: Tx, documentIds: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const batch of chunks(documentIds)) {
    const now = await tx.selectFrom('documents').select('encounter_id').where('id', 'in', batch).execute();
    const stored = await tx
      .selectFrom('document_reads')
      .select('encounter_id')
      .where('document_id', 'in', batch)
      .execute();
    for (const r of now) out.push(r.encounter_id);
    for (const r of stored) out.push(r.encounter_id);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Writes of stored answers.

/** Rows per insert: 7-9 columns each, under both dialects' bound-parameter limits. */
const WRITE_CHUNK = 200;

export async function upsertEncounterReads(tx: Tx, rows: EncounterReadsTable[]): Promise<void> {
  for (const batch of chunks(rows, WRITE_CHUNK)) {
    await tx
      .insertInto('encounter_reads')
      .values(batch)
      .onConflict((oc) =>
        oc.column('encounter_id').doUpdateSet((eb) => ({
          organization_id: eb.ref('excluded.organization_id'),
          demo_training: eb.ref('excluded.demo_training'),
          created_at: eb.ref('excluded.created_at'),
          patient_id: eb.ref('excluded.patient_id'),
          summary: eb.ref('excluded.summary'),
          etag: eb.ref('excluded.etag'),
        })),
      )
      .execute();
  }
}

export async function upsertDocumentReads(tx: Tx, rows: DocumentReadsTable[]): Promise<void> {
  for (const batch of chunks(rows, WRITE_CHUNK)) {
    await tx
      .insertInto('document_reads')
      .values(batch)
      .onConflict((oc) =>
        oc.column('document_id').doUpdateSet((eb) => ({
          encounter_id: eb.ref('excluded.encounter_id'),
          organization_id: eb.ref('excluded.organization_id'),
          schema_type: eb.ref('excluded.schema_type'),
          detail: eb.ref('excluded.detail'),
          detail_etag: eb.ref('excluded.detail_etag'),
          transcript: eb.ref('excluded.transcript'),
          transcript_etag: eb.ref('excluded.transcript_etag'),
        })),
      )
      .execute();
  }
}

/**
 * Whether some encounter or document has no stored answer row: the read model was never built for
 * data stored before it existed, or a build was cut short. Every write of clinical data writes
 * both in one transaction, so the counts agree whenever the read model is whole. One statement,
 * so both counts come from one snapshot.
 */
export async function readModelIncomplete(db: Db): Promise<boolean> {
  const { rows } = await sql<{ encounters: number; documents: number }>`select
      (select count(*) from encounters) - (select count(*) from encounter_reads) as encounters,
      (select count(*) from documents) - (select count(*) from document_reads) as documents`.execute(db);
  const [gaps] = rows;
  return Number(gaps?.encounters) !== 0 || Number(gaps?.documents) !== 0;
}

/** The next `limit` encounter IDs after `afterId` (keyset), for rebuilding everything. */
export async function encounterIdsAfter(
  db: Db,
  afterId: string,
  limit: number,
  organizationId?: string,
): Promise<string[]> {
  let query = db.selectFrom('encounters').select('id').where('id', '>', afterId);
  if (organizationId !== undefined) query = query.where('organization_id', '=', organizationId);
  const rows = await query.orderBy('id').limit(limit).execute();
  return rows.map((r) => r.id);
}

export async function documentIdsAfter(
  db: Db,
  afterId: string,
  limit: number,
  organizationId?: string,
): Promise<string[]> {
  let query = db.selectFrom('documents').select('id').where('id', '>', afterId);
  if (organizationId !== undefined) query = query.where('organization_id', '=', organizationId);
  const rows = await query.orderBy('id').limit(limit).execute();
  return rows.map((r) => r.id);
}

// ---------------------------------------------------------------------------------------------
// The routes' reads: one statement each.

/**
 * Any organization's encounter `e`, read for its access flags only, and `c`, the same encounter's
 * stored answer joined only when it is the caller's and listable: everything a route answers with
 * comes from `c` (or is joined through it), so another organization's answer is never read. On
 * SQLite `c` is found by its whole primary key (organization, demo flag, created_at, ID).
 */
function callerEncounterRead(db: Db, encounterId: string, organizationId: string) {
  return db
    .selectFrom('encounter_reads as e')
    .leftJoin('encounter_reads as c', (join) =>
      join
        .on('c.organization_id', '=', organizationId)
        .on('c.demo_training', '=', 0)
        .onRef('c.created_at', '=', 'e.created_at')
        .onRef('c.encounter_id', '=', 'e.encounter_id'),
    )
    .select([ownFlag('e.organization_id', organizationId).as('own'), 'e.demo_training as demo_training'])
    .where('e.encounter_id', '=', encounterId);
}

export const encounterRead = preparedQuery((db, encounterId: string, organizationId: string) =>
  callerEncounterRead(db, encounterId, organizationId).select([
    'c.patient_id as patient_id',
    'c.summary as summary',
    'c.etag as etag',
  ]),
);

/** The encounter's access flags and, when it is the caller's, the document asked for under it. */
function documentReadJoin(db: Db, encounterId: string, documentId: string, organizationId: string) {
  return callerEncounterRead(db, encounterId, organizationId)
    .leftJoin('document_reads as d', (join) =>
      join
        .on('d.document_id', '=', documentId)
        .onRef('d.encounter_id', '=', 'c.encounter_id')
        .on('d.organization_id', '=', organizationId),
    )
    .select(['c.patient_id as patient_id', 'd.document_id as document_id', 'd.schema_type as schema_type']);
}

export const documentDetailRead = preparedQuery(
  (db, encounterId: string, documentId: string, organizationId: string) =>
    documentReadJoin(db, encounterId, documentId, organizationId).select([
      'd.detail as body',
      'd.detail_etag as etag',
    ]),
);

export const transcriptRead = preparedQuery(
  (db, encounterId: string, documentId: string, organizationId: string) =>
    documentReadJoin(db, encounterId, documentId, organizationId).select([
      'd.transcript as body',
      'd.transcript_etag as etag',
    ]),
);

export interface PageRow {
  summary: string;
  etag: string;
  patient_id: string;
}

function pageRead(sort: 'asc' | 'desc') {
  return preparedQuery(
    (db, organizationId: string, startMs: number, endMs: number, limit: number, offset: number) =>
      db
        .selectFrom('encounter_reads')
        .select(['summary', 'etag', 'patient_id'])
        .where('organization_id', '=', organizationId)
        .where('demo_training', '=', 0)
        .where('created_at', '>=', startMs)
        .where('created_at', '<', endMs)
        .orderBy('created_at', sort)
        .orderBy('encounter_id', sort)
        .limit(limit)
        .offset(offset),
  );
}

/** One range scan of the list index, which carries the stored summaries. */
export const PAGE_READS = { asc: pageRead('asc'), desc: pageRead('desc') };

/** Where an offset lands among whole days: that day and the entries before it, or past them all. */
export type DayAtOffset = { day: number; before: number } | { past: number };

/**
 * The whole day (of the per-day roll-up, within [firstDay, endDay)) in which the entry at
 * `offset` lies, counting days in `sort` order, with the number of entries in the days before
 * it; or, when the days hold `offset` entries or fewer, how many they hold.
 *
 * On SQLite the days are read in order and the walk stops at the target day (tens of rows for
 * an offset of 10,000 at a few hundred encounters a day); a window function over every day cost
 * about 0.6 ms a call. PostgreSQL sums them with a window function in one round trip.
 */
export async function dayAtOffset(
  db: Db,
  sort: 'asc' | 'desc',
  organizationId: string,
  firstDay: number,
  endDay: number,
  offset: number,
): Promise<DayAtOffset> {
  const sqlite = sqliteHandleOf(db);
  if (sqlite !== undefined && !sqlite.inTransaction) {
    let statement = dayWalks.get(sqlite)?.[sort];
    if (!statement) {
      const walks = {
        asc: sqlite.prepare(DAY_WALK_SQL('asc')).raw(true),
        desc: sqlite.prepare(DAY_WALK_SQL('desc')).raw(true),
      };
      dayWalks.set(sqlite, walks);
      statement = walks[sort];
    }
    let before = 0;
    for (const [day, count] of statement.iterate(organizationId, firstDay, endDay) as Iterable<
      [number, number]
    >) {
      if (before + count > offset) return { day, before };
      before += count;
    }
    return { past: before };
  }
  const [row] = await DAY_AT_OFFSET[sort](db, organizationId, firstDay, endDay, offset);
  if (row) return { day: Number(row.day), before: Number(row.before) };
  const [sum] = await DAY_SUM(db, organizationId, firstDay, endDay);
  return { past: Number(sum?.n ?? 0) };
}

const DAY_WALK_SQL = (sort: 'asc' | 'desc') =>
  `select day, count from encounter_day_counts where organization_id = ? and day >= ? and day < ? order by day ${sort}`;

const dayWalks = new WeakMap<SQLite.Database, Record<'asc' | 'desc', SQLite.Statement>>();

function dayAtOffsetQuery(sort: 'asc' | 'desc') {
  const order = sql.raw(sort === 'asc' ? 'asc' : 'desc');
  return preparedQuery((db, organizationId: string, firstDay: number, endDay: number, offset: number) => {
    const query = sql<{ day: number; before: number }>`select day, running - count as before from (
        select day, count, sum(count) over (order by day ${order}) as running
        from encounter_day_counts
        where organization_id = ${organizationId} and day >= ${firstDay} and day < ${endDay}
      ) as days where running > ${offset} order by day ${order} limit 1`;
    return { compile: () => query.compile(db) };
  });
}

const DAY_AT_OFFSET = { asc: dayAtOffsetQuery('asc'), desc: dayAtOffsetQuery('desc') };

const DAY_SUM = preparedQuery((db, organizationId: string, firstDay: number, endDay: number) =>
  db
    .selectFrom('encounter_day_counts')
    .select((eb) => eb.fn.sum<number | null>('count').as('n'))
    .where('organization_id', '=', organizationId)
    .where('day', '>=', firstDay)
    .where('day', '<', endDay),
);

/**
 * Encounter reads. Every function takes the caller's organization: the tenant filter lives here,
 * never in a handler. Demo/training encounters are never listed or counted.
 */
import type { SortOrder } from '../contract/listQuery.js';
import { DAY_MS, dayOf } from '../time.js';
import type { Db } from './database.js';
import { preparedQuery } from './preparedQuery.js';
import type { DocumentRow, EncounterRow, PatientRow } from './schema.js';

/**
 * IDs are compared exactly; one that no database could hold (PostgreSQL text cannot contain NUL)
 * matches nothing, rather than failing the query.
 */
export function isStorableId(id: string): boolean {
  return !id.includes('\u0000');
}

/** Document schema types the public API shows; others are internal (decisions.md). */
export const PUBLIC_SCHEMA_TYPES = ['document', 'ambient_transcript'] as const;

/** created_at window: `startMs` inclusive, `endMs` exclusive. */
export interface CreatedWindow {
  startMs?: number | undefined;
  endMs?: number | undefined;
}

export type DocumentSummaryRow = Pick<
  DocumentRow,
  'id' | 'encounter_id' | 'schema_type' | 'title' | 'status' | 'workflow_variant' | 'audio_duration_seconds'
>;

export interface EncounterView {
  encounter: EncounterRow;
  patient: PatientRow;
  documents: DocumentSummaryRow[];
}

/** What an encounter ID is to the caller. Only `found` carries data. */
export type EncounterAccess<T = EncounterRow> =
  | { status: 'found'; encounter: T }
  | { status: 'absent' }
  | { status: 'other_organization' }
  | { status: 'demo_training' };

/**
 * Classifies an encounter ID for the caller: its own, another organization's, demo/training, or
 * absent. When it is the caller's: with its patient and document summaries, in one
 * statement (the detail route's only read): one row per public document, or one row with no
 * document columns. Patient and documents are joined only within the caller's organization and
 * only for a listable encounter, so another organization's data is never read.
 */
export async function findEncounterViewAccess(
  db: Db,
  organizationId: string,
  encounterId: string,
): Promise<EncounterAccess<EncounterView>> {
  if (!isStorableId(encounterId)) return { status: 'absent' };
  const rows = await encounterViewById(db, encounterId, organizationId);
  const first = rows[0];
  if (!first) return { status: 'absent' };
  const access = classifyEncounter(first, organizationId, null);
  if (access.status !== 'found') return access;
  if (first.p_id === null) throw new Error(`encounter ${first.id} has no patient row`);
  const documents: DocumentSummaryRow[] = [];
  for (const r of rows) {
    if (r.d_id === null) continue;
    documents.push({
      id: r.d_id,
      encounter_id: first.id,
      schema_type: r.d_schema_type as string,
      title: r.d_title as string,
      status: r.d_status,
      workflow_variant: r.d_workflow_variant,
      audio_duration_seconds: r.d_audio_duration_seconds,
    });
  }
  return { status: 'found', encounter: joinedView(first as JoinedRow, documents) };
}

/** The access class of an encounter row for the caller; `data` is carried when it is found. */
export function classifyEncounter<T>(
  row: Pick<EncounterRow, 'organization_id' | 'demo_training'>,
  organizationId: string,
  data: T,
): EncounterAccess<T> {
  if (row.organization_id !== organizationId) return { status: 'other_organization' };
  if (row.demo_training === 1) return { status: 'demo_training' };
  return { status: 'found', encounter: data };
}

/** An encounter row with its patient's columns, prefixed `p_`. */
type JoinedRow = EncounterRow & { [K in keyof PatientRow as `p_${K}`]: PatientRow[K] };

// Prepared reads name every column (preparedQuery refuses `*`): a column added by a later
// migration must not change the shape of a statement that is already prepared.
const ENCOUNTER_COLUMNS = [
  'e.id',
  'e.organization_id',
  'e.patient_id',
  'e.encounter_type',
  'e.status',
  'e.date_of_service',
  'e.created_at',
  'e.updated_at',
  'e.demo_training',
] as const;

const PATIENT_COLUMNS = [
  'p.id as p_id',
  'p.organization_id as p_organization_id',
  'p.first_name as p_first_name',
  'p.last_name as p_last_name',
  'p.date_of_birth as p_date_of_birth',
  'p.created_at as p_created_at',
  'p.updated_at as p_updated_at',
] as const;

const encounterViewById = preparedQuery((db, encounterId: string, organizationId: string) =>
  db
    .selectFrom('encounters as e')
    .leftJoin('patients as p', (join) =>
      join.onRef('p.id', '=', 'e.patient_id').on('p.organization_id', '=', organizationId),
    )
    .leftJoin('documents as d', (join) =>
      join
        .onRef('d.encounter_id', '=', 'e.id')
        .on('d.organization_id', '=', organizationId)
        .on('d.schema_type', 'in', PUBLIC_SCHEMA_TYPES)
        .on('e.organization_id', '=', organizationId)
        .on('e.demo_training', '=', 0),
    )
    .select(ENCOUNTER_COLUMNS)
    .select(PATIENT_COLUMNS)
    .select([
      'd.id as d_id',
      'd.schema_type as d_schema_type',
      'd.title as d_title',
      'd.status as d_status',
      'd.workflow_variant as d_workflow_variant',
      'd.audio_duration_seconds as d_audio_duration_seconds',
    ])
    .where('e.id', '=', encounterId)
    .orderBy('d.created_at')
    .orderBy('d.id'),
);

function joinedView(r: JoinedRow, documents: DocumentSummaryRow[]): EncounterView {
  return {
    encounter: {
      id: r.id,
      organization_id: r.organization_id,
      patient_id: r.patient_id,
      encounter_type: r.encounter_type,
      status: r.status,
      date_of_service: r.date_of_service,
      created_at: r.created_at,
      updated_at: r.updated_at,
      demo_training: r.demo_training,
    },
    patient: {
      id: r.p_id,
      organization_id: r.p_organization_id,
      first_name: r.p_first_name,
      last_name: r.p_last_name,
      date_of_birth: r.p_date_of_birth,
      created_at: r.p_created_at,
      updated_at: r.p_updated_at,
    },
    documents,
  };
}

export interface ListPage {
  window: CreatedWindow;
  sort: SortOrder;
  limit: number;
  offset: number;
}

/**
 * One page of the caller's listable encounters. A deferred join: the page's IDs come from the
 * covering list index alone (organization, demo flag, created_at, id), so a deep offset skips
 * index entries rather than joining 10,000 rows it then throws away; only the page's rows are
 * read in full.
 */
export async function listEncounterPage(
  db: Db,
  organizationId: string,
  page: ListPage,
): Promise<EncounterView[]> {
  const rows = await PAGE_QUERIES[page.sort](
    db,
    organizationId,
    page.window.startMs ?? EARLIEST_MS,
    page.window.endMs ?? AFTER_LATEST_MS,
    page.limit,
    page.offset,
  );
  if (rows.length === 0) return [];
  const documents = await listDocumentSummaries(
    db,
    organizationId,
    rows.map((r) => r.id),
  );
  return rows.map((r) => joinedView(r, documents.get(r.id) ?? []));
}

// An absent bound is the widest a time can be, so every page and count has one SQL shape per
// sort order (prepared once) rather than one per combination of bounds.
const EARLIEST_MS = -8.64e15;
const AFTER_LATEST_MS = 8.64e15 + 1;

function pageQuery(sort: SortOrder) {
  return preparedQuery(
    (db, organizationId: string, startMs: number, endMs: number, limit: number, offset: number) => {
      const pageIds = db
        .selectFrom('encounters')
        .select('id')
        .where('organization_id', '=', organizationId)
        .where('demo_training', '=', 0)
        .where('created_at', '>=', startMs)
        .where('created_at', '<', endMs)
        .orderBy('created_at', sort)
        .orderBy('id', sort)
        .limit(limit)
        .offset(offset)
        .as('page');
      return db
        .selectFrom(pageIds)
        .innerJoin('encounters as e', 'e.id', 'page.id')
        .innerJoin('patients as p', 'p.id', 'e.patient_id')
        .select(ENCOUNTER_COLUMNS)
        .select(PATIENT_COLUMNS)
        .orderBy('e.created_at', sort)
        .orderBy('e.id', sort);
    },
  );
}

const PAGE_QUERIES = { asc: pageQuery('asc'), desc: pageQuery('desc') };

const SUMMARY_COLUMNS = [
  'id',
  'encounter_id',
  'schema_type',
  'title',
  'status',
  'workflow_variant',
  'audio_duration_seconds',
] as const;

/** Summaries for up to 100 encounters: one prepared statement per list length. */
const summariesByCount = new Map<number, ReturnType<typeof summariesQuery>>();

function summariesQuery() {
  return preparedQuery((db, organizationId: string, ...encounterIds: string[]) =>
    db
      .selectFrom('documents')
      .select(SUMMARY_COLUMNS)
      .where('encounter_id', 'in', encounterIds)
      .where('organization_id', '=', organizationId)
      .where('schema_type', 'in', PUBLIC_SCHEMA_TYPES)
      .orderBy('encounter_id')
      .orderBy('created_at')
      .orderBy('id'),
  );
}

async function listDocumentSummaries(
  db: Db,
  organizationId: string,
  encounterIds: string[],
): Promise<Map<string, DocumentSummaryRow[]>> {
  let query = summariesByCount.get(encounterIds.length);
  if (!query) {
    query = summariesQuery();
    summariesByCount.set(encounterIds.length, query);
  }
  const rows = await query(db, organizationId, ...encounterIds);
  const byEncounter = new Map<string, DocumentSummaryRow[]>();
  for (const row of rows) {
    const list = byEncounter.get(row.encounter_id);
    if (list) list.push(row);
    else byEncounter.set(row.encounter_id, [row]);
  }
  return byEncounter;
}

/**
 * The exact number of listable encounters in a window, at a cost that does not grow with the
 * organization: whole days come from the per-day roll-up (maintained in the same transaction as
 * every encounter write), and only the partial days at the window's edges are counted on the
 * list index.
 */
export async function countEncounters(
  db: Db,
  organizationId: string,
  window: CreatedWindow,
): Promise<number> {
  const { startMs, endMs } = window;
  const firstFullDay = startMs === undefined ? undefined : Math.ceil(startMs / DAY_MS);
  const endFullDay = endMs === undefined ? undefined : dayOf(endMs);
  if (firstFullDay !== undefined && endFullDay !== undefined && firstFullDay >= endFullDay) {
    return countOnIndex(db, organizationId, startMs ?? EARLIEST_MS, endMs ?? AFTER_LATEST_MS);
  }
  const parts = [
    rollupCount(
      db,
      organizationId,
      firstFullDay ?? dayOf(EARLIEST_MS),
      endFullDay ?? dayOf(AFTER_LATEST_MS) + 1,
    ),
  ];
  if (startMs !== undefined && firstFullDay !== undefined && startMs < firstFullDay * DAY_MS) {
    parts.push(countOnIndex(db, organizationId, startMs, firstFullDay * DAY_MS));
  }
  if (endMs !== undefined && endFullDay !== undefined && endFullDay * DAY_MS < endMs) {
    parts.push(countOnIndex(db, organizationId, endFullDay * DAY_MS, endMs));
  }
  const counts = await Promise.all(parts);
  return counts.reduce((a, b) => a + b, 0);
}

const rollupSum = preparedQuery((db, organizationId: string, firstDay: number, endDay: number) =>
  db
    .selectFrom('encounter_day_counts')
    .select((eb) => eb.fn.sum<number | null>('count').as('n'))
    .where('organization_id', '=', organizationId)
    .where('day', '>=', firstDay)
    .where('day', '<', endDay),
);

async function rollupCount(
  db: Db,
  organizationId: string,
  firstDay: number,
  endDay: number,
): Promise<number> {
  const [row] = await rollupSum(db, organizationId, firstDay, endDay);
  return Number(row?.n ?? 0);
}

const indexCount = preparedQuery((db, organizationId: string, startMs: number, endMs: number) =>
  db
    .selectFrom('encounters')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('organization_id', '=', organizationId)
    .where('demo_training', '=', 0)
    .where('created_at', '>=', startMs)
    .where('created_at', '<', endMs),
);

async function countOnIndex(db: Db, organizationId: string, startMs: number, endMs: number): Promise<number> {
  const [row] = await indexCount(db, organizationId, startMs, endMs);
  return Number(row?.n ?? 0);
}

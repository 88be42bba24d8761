/**
 * Encounter reads. Every function takes the caller's organization: the tenant filter lives here,
 * never in a handler. Demo/training encounters are never listed or counted.
 */
import type { SortOrder } from '../contract/listQuery.js';
import { DAY_MS, dayOf } from '../time.js';
import type { Db } from './database.js';
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

export type EncounterAccess =
  | { status: 'found'; encounter: EncounterRow }
  | { status: 'absent' }
  | { status: 'other_organization' }
  | { status: 'demo_training' };

/**
 * Classifies an encounter ID for the caller: its own (data returned), another organization's,
 * demo/training, or absent. Only the first carries data.
 */
export async function findEncounterAccess(
  db: Db,
  organizationId: string,
  encounterId: string,
): Promise<EncounterAccess> {
  if (!isStorableId(encounterId)) return { status: 'absent' };
  const row = await db.selectFrom('encounters').selectAll().where('id', '=', encounterId).executeTakeFirst();
  if (!row) return { status: 'absent' };
  if (row.organization_id !== organizationId) return { status: 'other_organization' };
  if (row.demo_training === 1) return { status: 'demo_training' };
  return { status: 'found', encounter: row };
}

export async function loadEncounterView(
  db: Db,
  organizationId: string,
  encounter: EncounterRow,
): Promise<EncounterView> {
  const [patient, documents] = await Promise.all([
    db
      .selectFrom('patients')
      .selectAll()
      .where('id', '=', encounter.patient_id)
      .where('organization_id', '=', organizationId)
      .executeTakeFirstOrThrow(),
    listDocumentSummaries(db, organizationId, [encounter.id]),
  ]);
  return { encounter, patient, documents: documents.get(encounter.id) ?? [] };
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
  let ids = db
    .selectFrom('encounters')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('demo_training', '=', 0);
  if (page.window.startMs !== undefined) ids = ids.where('created_at', '>=', page.window.startMs);
  if (page.window.endMs !== undefined) ids = ids.where('created_at', '<', page.window.endMs);
  const pageIds = ids
    .orderBy('created_at', page.sort)
    .orderBy('id', page.sort)
    .limit(page.limit)
    .offset(page.offset)
    .as('page');
  const rows = await db
    .selectFrom(pageIds)
    .innerJoin('encounters as e', 'e.id', 'page.id')
    .innerJoin('patients as p', 'p.id', 'e.patient_id')
    .selectAll('e')
    .select([
      'p.id as p_id',
      'p.organization_id as p_organization_id',
      'p.first_name as p_first_name',
      'p.last_name as p_last_name',
      'p.date_of_birth as p_date_of_birth',
      'p.created_at as p_created_at',
      'p.updated_at as p_updated_at',
    ])
    .orderBy('e.created_at', page.sort)
    .orderBy('e.id', page.sort)
    .execute();
  if (rows.length === 0) return [];
  const documents = await listDocumentSummaries(
    db,
    organizationId,
    rows.map((r) => r.id),
  );
  return rows.map((r) => ({
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
    documents: documents.get(r.id) ?? [],
  }));
}

async function listDocumentSummaries(
  db: Db,
  organizationId: string,
  encounterIds: string[],
): Promise<Map<string, DocumentSummaryRow[]>> {
  const rows = await db
    .selectFrom('documents')
    .select([
      'id',
      'encounter_id',
      'schema_type',
      'title',
      'status',
      'workflow_variant',
      'audio_duration_seconds',
    ])
    .where('encounter_id', 'in', encounterIds)
    .where('organization_id', '=', organizationId)
    .where('schema_type', 'in', PUBLIC_SCHEMA_TYPES)
    .orderBy('encounter_id')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
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
    return countOnIndex(db, organizationId, startMs, endMs);
  }
  let rollup = db
    .selectFrom('encounter_day_counts')
    .select((eb) => eb.fn.sum<number | null>('count').as('n'))
    .where('organization_id', '=', organizationId);
  if (firstFullDay !== undefined) rollup = rollup.where('day', '>=', firstFullDay);
  if (endFullDay !== undefined) rollup = rollup.where('day', '<', endFullDay);
  const parts = [rollup.executeTakeFirst().then((r) => Number(r?.n ?? 0))];
  if (startMs !== undefined && firstFullDay !== undefined && startMs < firstFullDay * DAY_MS) {
    parts.push(countOnIndex(db, organizationId, startMs, firstFullDay * DAY_MS));
  }
  if (endMs !== undefined && endFullDay !== undefined && endFullDay * DAY_MS < endMs) {
    parts.push(countOnIndex(db, organizationId, endFullDay * DAY_MS, endMs));
  }
  const counts = await Promise.all(parts);
  return counts.reduce((a, b) => a + b, 0);
}

async function countOnIndex(
  db: Db,
  organizationId: string,
  startMs: number | undefined,
  endMs: number | undefined,
): Promise<number> {
  let query = db
    .selectFrom('encounters')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('organization_id', '=', organizationId)
    .where('demo_training', '=', 0);
  if (startMs !== undefined) query = query.where('created_at', '>=', startMs);
  if (endMs !== undefined) query = query.where('created_at', '<', endMs);
  const row = await query.executeTakeFirst();
  return Number(row?.n ?? 0);
}

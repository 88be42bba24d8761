/**
 * Encounter reads. Every function takes the caller's organization: the tenant filter lives here,
 * never in a handler. Demo/training encounters are never listed or counted.
 */
import type { SortOrder } from '../contract/listQuery.js';
import { DAY_MS, dayOf } from '../time.js';
import type { Db } from './database.js';
import { preparedQuery } from './preparedQuery.js';
import { dayAtOffset, PAGE_READS, type PageRow } from './readModel.js';
import type { DocumentRow, EncounterRow, PatientRow } from './schema.js';

/**
 * IDs are compared exactly; one that no database could hold (PostgreSQL text cannot contain NUL)
 * matches nothing, rather than failing the query.
 */
export function isStorableId(id: string): boolean {
  return !id.includes('\u0000');
}

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

export interface ListPage {
  window: CreatedWindow;
  sort: SortOrder;
  limit: number;
  offset: number;
}

/**
 * One page of the caller's listable encounters from the read model: one range scan of the list
 * index (organization, demo flag, created_at, encounter ID), which carries each encounter's stored
 * summary and tag, so nothing is joined and no object is built per item.
 *
 * A deep offset does not walk every entry before it. The per-day count roll-up (exact, kept in
 * the same transaction as every encounter write) says in which day the offset lands, so the scan
 * starts at that day and skips only the entries before the offset within it: the cost is the
 * days before the target (a walk over the roll-up's rows that stops at the target day) plus at
 * most one day's entries, instead of `offset` entries. Chosen over a per-organization rank or
 * checkpoint rows because it needs nothing more at import: an encounter inserted early in the
 * order would shift every later rank or checkpoint, while the roll-up only changes one day's
 * count. Its limit: an organization with more than a few thousand encounters on one day skips up
 * to that day's entries (see docs/benchmarks.md).
 */
export async function listEncounterPage(db: Db, organizationId: string, page: ListPage): Promise<PageRow[]> {
  const { sort, limit } = page;
  const bounds = await pageBounds(db, organizationId, page);
  return PAGE_READS[sort](db, organizationId, bounds.startMs, bounds.endMs, limit, bounds.offset);
}

/** Below this offset the scan simply skips entries: cheaper than asking the roll-up. */
const SKIP_BY_DAYS_FROM = 1000;

interface Bounds {
  startMs: number;
  endMs: number;
  offset: number;
}

/** The same page, as a window that starts (or, descending, ends) at the day the offset lands in. */
async function pageBounds(db: Db, organizationId: string, page: ListPage): Promise<Bounds> {
  const startMs = page.window.startMs ?? EARLIEST_MS;
  const endMs = page.window.endMs ?? AFTER_LATEST_MS;
  const plain = { startMs, endMs, offset: page.offset };
  const firstFullDay = Math.ceil(startMs / DAY_MS);
  const endFullDay = dayOf(endMs);
  if (page.offset < SKIP_BY_DAYS_FROM || firstFullDay >= endFullDay) return plain;
  if (page.sort === 'asc') {
    // Entries before the first whole day come first.
    const head =
      startMs < firstFullDay * DAY_MS
        ? await countOnIndex(db, organizationId, startMs, firstFullDay * DAY_MS)
        : 0;
    if (page.offset < head) return plain;
    const rest = page.offset - head;
    const at = await dayAtOffset(db, 'asc', organizationId, firstFullDay, endFullDay, rest);
    if ('past' in at) return { startMs: endFullDay * DAY_MS, endMs, offset: rest - at.past };
    return { startMs: at.day * DAY_MS, endMs, offset: rest - at.before };
  }
  const tail =
    endFullDay * DAY_MS < endMs ? await countOnIndex(db, organizationId, endFullDay * DAY_MS, endMs) : 0;
  if (page.offset < tail) return plain;
  const rest = page.offset - tail;
  const at = await dayAtOffset(db, 'desc', organizationId, firstFullDay, endFullDay, rest);
  if ('past' in at) return { startMs, endMs: firstFullDay * DAY_MS, offset: rest - at.past };
  return { startMs, endMs: (at.day + 1) * DAY_MS, offset: rest - at.before };
}

// An absent bound is the widest a time can be, so every page and count has one SQL shape per
// sort order (prepared once) rather than one per combination of bounds.
const EARLIEST_MS = -8.64e15;
const AFTER_LATEST_MS = 8.64e15 + 1;

/**
 * The exact number of listable encounters in a window, at a cost that does not grow with the
 * organization: whole days come from the per-day roll-up (maintained in the same transaction as
 * every encounter write), and only the partial days at the window's edges are counted on the
 * list index. Without a window it is the organization's total, kept beside the roll-up.
 */
export async function countEncounters(
  db: Db,
  organizationId: string,
  window: CreatedWindow,
): Promise<number> {
  const { startMs, endMs } = window;
  if (startMs === undefined && endMs === undefined) return organizationCount(db, organizationId);
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

const organizationTotal = preparedQuery((db, organizationId: string) =>
  db.selectFrom('encounter_counts').select('count').where('organization_id', '=', organizationId),
);

/** The total without a window: one row, kept with the roll-up (migration 011). */
async function organizationCount(db: Db, organizationId: string): Promise<number> {
  const [row] = await organizationTotal(db, organizationId);
  return Number(row?.count ?? 0);
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

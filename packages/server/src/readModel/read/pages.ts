/**
 * Pages of a caller's encounter list, read from the read model's list index. Every read takes
 * the caller's organization (the tenant filter is in the SQL, never in a handler), and
 * demo/training encounters are never listed.
 */
import type { SortOrder } from '../../contract/listQuery.js';
import type { Db } from '../../database/connection.js';
import { preparedQuery } from '../../database/preparedQuery.js';
import { DAY_MS, dayOf } from '../../time.js';
import { countOnIndex } from './counts.js';
import { AFTER_LATEST_MS, type CreatedWindow, EARLIEST_MS } from './createdWindow.js';
import { dayAtOffset } from './dayRollup.js';

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
    { turnBatched: true },
  );
}

/** One range scan of the list index, which carries the stored summaries. */
const PAGE_READS = { asc: pageRead('asc'), desc: pageRead('desc') };

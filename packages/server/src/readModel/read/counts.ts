/**
 * Counts of a caller's listable encounters (demo/training encounters are never counted): the list's
 * total, from the per-day and per-hour roll-ups and the list index.
 */
import { sql } from 'kysely';
import type { Db } from '../../database/connection.js';
import { preparedQuery } from '../../database/preparedQuery.js';
import { unplannedInteger, unplannedText } from '../../database/unplannedValue.js';
import { DAY_MS, dayOf, HOUR_MS, hourOf } from '../../time.js';
import { rollupCount } from './countRollups.js';
import { AFTER_LATEST_MS, type CreatedWindow, EARLIEST_MS } from './createdWindow.js';

/**
 * The exact number of listable encounters in a window: whole days from the per-day roll-up, whole
 * hours at the window's edges from the per-hour roll-up (both kept exact in the same transaction
 * as every encounter write), and only the partial hours at its very ends on the list index. The
 * cost grows with the days in the window and the entries of at most two partial hours, not with
 * the organization's total. Without a window it is the organization's total, kept beside the
 * roll-ups.
 */
export async function countEncounters(
  db: Db,
  organizationId: string,
  window: CreatedWindow,
): Promise<number> {
  const { startMs, endMs } = window;
  if (startMs === undefined && endMs === undefined) return organizationCount(db, organizationId);
  // An absent bound reaches past every day, so nothing beyond the whole days is counted on its side.
  const firstDay = startMs === undefined ? dayOf(EARLIEST_MS) : Math.ceil(startMs / DAY_MS);
  const endDay = endMs === undefined ? dayOf(AFTER_LATEST_MS) + 1 : dayOf(endMs);
  const parts =
    firstDay >= endDay
      ? byHours(db, organizationId, startMs ?? EARLIEST_MS, endMs ?? AFTER_LATEST_MS)
      : [
          ...(startMs === undefined ? [] : byHours(db, organizationId, startMs, firstDay * DAY_MS)),
          rollupCount(db, 'day', organizationId, firstDay, endDay),
          ...(endMs === undefined ? [] : byHours(db, organizationId, endDay * DAY_MS, endMs)),
        ];
  const counts = await Promise.all(parts);
  return counts.reduce((a, b) => a + b, 0);
}

/**
 * The counts that make up [startMs, endMs), a span with no whole day inside: its whole hours from
 * the hour roll-up, the partial hours at its ends on the list index. Counted on the index alone, a
 * partial day cost one step per entry, about 2,000 a day at 1,000,000 encounters.
 */
function byHours(db: Db, organizationId: string, startMs: number, endMs: number): Promise<number>[] {
  if (startMs >= endMs) return [];
  const firstHour = Math.ceil(startMs / HOUR_MS);
  const endHour = hourOf(endMs);
  if (firstHour >= endHour) return [countOnIndex(db, organizationId, startMs, endMs)];
  const parts = [rollupCount(db, 'hour', organizationId, firstHour, endHour)];
  if (startMs < firstHour * HOUR_MS)
    parts.push(countOnIndex(db, organizationId, startMs, firstHour * HOUR_MS));
  if (endHour * HOUR_MS < endMs) parts.push(countOnIndex(db, organizationId, endHour * HOUR_MS, endMs));
  return parts;
}

/** The organization's total (exported so a test can read its SQL). */
export function organizationTotalQuery(db: Db, organizationId: string) {
  return db
    .selectFrom('encounter_counts')
    .select('count')
    .where('organization_id', '=', unplannedText(db, organizationId));
}

const organizationTotal = preparedQuery(organizationTotalQuery, { turnBatched: true });

/** The total without a window: one row, kept with the roll-up (migration 011). */
async function organizationCount(db: Db, organizationId: string): Promise<number> {
  const [row] = await organizationTotal(db, organizationId);
  return Number(row?.count ?? 0);
}

/**
 * The count on the index (exported so a test can ask the planner how it runs): a range of the
 * index whatever the values, so on SQLite they are kept from the planner
 * (database/unplannedValue.ts).
 */
export function indexCountQuery(db: Db, organizationId: string, startMs: number, endMs: number) {
  return db
    .selectFrom('encounters')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('organization_id', '=', unplannedText(db, organizationId))
    .where('demo_training', '=', sql.lit(0))
    .where('created_at', '>=', unplannedInteger(db, startMs))
    .where('created_at', '<', unplannedInteger(db, endMs));
}

const indexCount = preparedQuery(indexCountQuery, { turnBatched: true });

/** Listable encounters in [startMs, endMs), counted on the list index. */
export async function countOnIndex(
  db: Db,
  organizationId: string,
  startMs: number,
  endMs: number,
): Promise<number> {
  const [row] = await indexCount(db, organizationId, startMs, endMs);
  return Number(row?.n ?? 0);
}

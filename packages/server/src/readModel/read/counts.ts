/**
 * Counts of a caller's listable encounters (demo/training encounters are never counted): the list's
 * total, from the per-day and per-hour roll-ups and the list index.
 */
import { sql } from 'kysely';
import type { Db } from '../../database/connection.js';
import { preparedQuery } from '../../database/preparedQuery.js';
import { unplannedInteger, unplannedText } from '../../database/unplannedValue.js';
import { DAY_MS, dayOf, HOUR_MS, hourOf } from '../../time.js';
import { earlierThan } from './countRollups.js';
import { AFTER_LATEST_MS, type CreatedWindow, EARLIEST_MS } from './createdWindow.js';

/**
 * The exact number of listable encounters in a window: whole days from the per-day roll-up's
 * running totals (where they end less where they start), whole hours at the window's edges from
 * the per-hour roll-up (both kept exact in the same transaction as every encounter write), and
 * only the partial hours at its very ends on the list index. The cost grows with the entries of
 * at most two partial hours and the hours beside them, not with the days in the window or the
 * organization's total. Without a window it is the organization's total, kept beside the
 * roll-ups.
 */
export async function countEncounters(
  db: Db,
  organizationId: string,
  window: CreatedWindow,
): Promise<number> {
  const { startMs, endMs } = window;
  if (startMs === undefined && endMs === undefined) return organizationCount(db, organizationId);
  const [row] = await windowCount(db, organizationId, ...windowCountBounds(startMs, endMs));
  return Number(row?.n ?? 0);
}

/**
 * The five parts a window's count adds up, each [first, end): its whole days, the whole hours
 * before them and after them, and the partial hours at its start and at its end (epoch
 * milliseconds, counted on the list index). A part not needed is empty: [0, 0), or [x, x) where
 * the window's end lies on a boundary.
 */
export type WindowCountBounds = [
  firstDay: number,
  endDay: number,
  firstHourBefore: number,
  endHourBefore: number,
  firstHourAfter: number,
  endHourAfter: number,
  startPartFrom: number,
  startPartTo: number,
  endPartFrom: number,
  endPartTo: number,
];

/**
 * A window's five parts. Its partial days are counted by the hour roll-up and only their partial
 * hours on the index: on the index alone a partial day cost one step per entry, about 2,000 a day
 * at 1,000,000 encounters.
 */
export function windowCountBounds(startMs: number | undefined, endMs: number | undefined): WindowCountBounds {
  // An absent bound reaches past every day, so nothing beyond the whole days is counted on its side.
  const firstDay = startMs === undefined ? dayOf(EARLIEST_MS) : Math.ceil(startMs / DAY_MS);
  const endDay = endMs === undefined ? dayOf(AFTER_LATEST_MS) + 1 : dayOf(endMs);
  if (firstDay >= endDay) {
    // No whole day inside: the whole hours, if any, between two partial ones.
    const start = startMs ?? EARLIEST_MS;
    const end = endMs ?? AFTER_LATEST_MS;
    const firstHour = Math.ceil(start / HOUR_MS);
    const endHour = hourOf(end);
    if (firstHour >= endHour) return [0, 0, 0, 0, 0, 0, start, end, 0, 0];
    return [0, 0, firstHour, endHour, 0, 0, start, firstHour * HOUR_MS, endHour * HOUR_MS, end];
  }
  // An absent bound's side is [0, 0), not its first or last day's hours: those would not fit
  // PostgreSQL's integer.
  const firstHour = startMs === undefined ? 0 : Math.ceil(startMs / HOUR_MS);
  const endHour = endMs === undefined ? 0 : hourOf(endMs);
  return [
    firstDay,
    endDay,
    firstHour,
    startMs === undefined ? 0 : firstDay * 24,
    endMs === undefined ? 0 : endDay * 24,
    endHour,
    startMs ?? 0,
    firstHour * HOUR_MS,
    endHour * HOUR_MS,
    endMs ?? 0,
  ];
}

/**
 * The window's count as one statement (exported so a test can ask the planner how it runs): its
 * five parts in one call and one snapshot, where a statement a part cost the request thread a call
 * each. An empty part finds nothing in its index at once, so the statement keeps one shape.
 */
export function windowCountQuery(db: Db, organizationId: string, ...bounds: WindowCountBounds) {
  const [
    firstDay,
    endDay,
    firstHourBefore,
    endHourBefore,
    firstHourAfter,
    endHourAfter,
    startPartFrom,
    startPartTo,
    endPartFrom,
    endPartTo,
  ] = bounds;
  const org = () => unplannedText(db, organizationId);
  const int = (value: number) => unplannedInteger(db, value);
  const hours = (first: number, end: number) =>
    sql`coalesce((select sum(count) from encounter_hour_counts
      where organization_id = ${org()} and hour >= ${int(first)} and hour < ${int(end)}), 0)`;
  const onIndex = (from: number, to: number) => sql`(select count(*) from encounters
    where organization_id = ${org()} and demo_training = 0
      and created_at >= ${int(from)} and created_at < ${int(to)})`;
  const days = sql`(${earlierThan(db, organizationId, endDay)} - ${earlierThan(db, organizationId, firstDay)})`;
  const query = sql<{ n: number | string | null }>`select ${days}
    + ${hours(firstHourBefore, endHourBefore)} + ${hours(firstHourAfter, endHourAfter)}
    + ${onIndex(startPartFrom, startPartTo)} + ${onIndex(endPartFrom, endPartTo)} as n`;
  return { compile: () => query.compile(db) };
}

const windowCount = preparedQuery(windowCountQuery, { turnBatched: true });

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

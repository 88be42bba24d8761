/**
 * Reads of the per-day count roll-up (encounter_day_counts, exact, kept in the same transaction
 * as every encounter write): the listable encounters of whole days, and the day a list offset
 * lands in.
 */
import type SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { type Db, type SqliteReadConnection, sqliteReadConnection } from '../../database/connection.js';
import { preparedQuery } from '../../database/preparedQuery.js';

const rollupSum = preparedQuery(
  (db, organizationId: string, firstDay: number, endDay: number) =>
    db
      .selectFrom('encounter_day_counts')
      .select((eb) => eb.fn.sum<number | null>('count').as('n'))
      .where('organization_id', '=', organizationId)
      .where('day', '>=', firstDay)
      .where('day', '<', endDay),
  { turnBatched: true },
);

/** Listable encounters of the whole days [firstDay, endDay). */
export async function rollupCount(
  db: Db,
  organizationId: string,
  firstDay: number,
  endDay: number,
): Promise<number> {
  const [row] = await rollupSum(db, organizationId, firstDay, endDay);
  return Number(row?.n ?? 0);
}

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
  const sqlite = sqliteReadConnection(db);
  if (sqlite !== undefined) {
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
  if (row?.day != null) return { day: Number(row.day), before: Number(row.before) };
  return { past: Number(row?.total ?? 0) };
}

const DAY_WALK_SQL = (sort: 'asc' | 'desc') =>
  `select day, count from encounter_day_counts where organization_id = ? and day >= ? and day < ? order by day ${sort}`;

const dayWalks = new WeakMap<SqliteReadConnection, Record<'asc' | 'desc', SQLite.Statement>>();

/**
 * One row: the day and the entries before it, or (no day holding the offset) the days' total.
 * The total is read by the same statement, so in the same snapshot as the search that found no
 * day; the scalar subquery runs only then.
 */
function dayAtOffsetQuery(sort: 'asc' | 'desc') {
  const order = sql.raw(sort === 'asc' ? 'asc' : 'desc');
  return preparedQuery(
    (db, organizationId: string, firstDay: number, endDay: number, offset: number) => {
      const days = sql`from encounter_day_counts
        where organization_id = ${organizationId} and day >= ${firstDay} and day < ${endDay}`;
      const query = sql<{
        day: number | null;
        before: number | null;
        total: number | null;
      }>`select hit.day, hit.before,
        case when hit.day is null then (select sum(count) ${days}) end as total
      from (select 1) as one left join lateral (
        select day, running - count as before from (
          select day, count, sum(count) over (order by day ${order}) as running ${days}
        ) as walked where running > ${offset} order by day ${order} limit 1
      ) as hit on true`;
      return { compile: () => query.compile(db) };
    },
    { turnBatched: true },
  );
}

const DAY_AT_OFFSET = { asc: dayAtOffsetQuery('asc'), desc: dayAtOffsetQuery('desc') };

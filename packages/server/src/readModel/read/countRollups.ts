/**
 * Reads of the count roll-ups (per day, with each day's running total, and per hour, exact, kept
 * in the same transaction as every encounter write): the day and the hour a list offset lands in.
 * A window's count reads them in its own statement (counts.ts).
 */
import type SQLite from 'better-sqlite3';
import { CompiledQuery, sql } from 'kysely';
import { type Db, type SqliteReadConnection, sqliteReadConnection } from '../../database/connection.js';
import { COUNT_ROLLUPS, type CountRollup } from '../../database/countRollups.js';
import { isSqlite } from '../../database/dialect.js';
import { preparedQuery } from '../../database/preparedQuery.js';
import { unplannedInteger, unplannedText } from '../../database/unplannedValue.js';

/**
 * Where an offset lands among a roll-up's days or hours: that day or hour and the entries before
 * it, or past them all.
 */
export type UnitAtOffset = { at: number; before: number } | { past: number };

/**
 * The whole day within [firstDay, endDay) in which the entry at `offset` lies, counting days in
 * `sort` order, with the number of entries in the days before it; or, when the days hold
 * `offset` entries or fewer, how many they hold.
 */
export async function dayAtOffset(
  db: Db,
  sort: 'asc' | 'desc',
  organizationId: string,
  firstDay: number,
  endDay: number,
  offset: number,
): Promise<UnitAtOffset> {
  const [row] = await DAY_AT_OFFSET[sort](db, organizationId, firstDay, endDay, offset);
  const lo = Number(row?.lo ?? 0);
  const hi = Number(row?.hi ?? 0);
  // The entry's place among all the organization's, counted from its first day.
  const target = sort === 'asc' ? lo + offset : hi - 1 - offset;
  if (target < lo || target >= hi) return { past: hi - lo };
  const day = Number(row?.day);
  const earlier = Number(row?.earlier);
  const count = Number(row?.count);
  if (row?.day == null || day < firstDay || day >= endDay || target < earlier || target >= earlier + count) {
    // Only running totals that disagree with the counts get here (an earlier release's import, until
    // `eds migrate` finds and rebuilds them). The walk over the counts places the page by them
    // alone; lo and hi came from the same totals, so this narrows, not removes, what they get wrong.
    return rollupAtOffset(db, 'day', sort, organizationId, firstDay, endDay, offset);
  }
  return { at: day, before: sort === 'asc' ? earlier - lo : hi - earlier - count };
}

/**
 * The organization's listable encounters on the days before `day`, from the running total of the
 * last day before it that has a row: one step back along the day roll-up's key.
 */
export function earlierThan(db: Db, organizationId: string, day: number) {
  return sql<number>`coalesce((select earlier + count from encounter_day_counts
    where organization_id = ${unplannedText(db, organizationId)} and day < ${unplannedInteger(db, day)}
    order by day desc limit 1), 0)`;
}

/**
 * The day a list offset lands in, as one statement (exported so a test can ask the planner how it
 * runs): the entries before the window's first day and before its end (lo, hi), and the last day
 * whose running total is at most the entry's place, found by one search of the running totals'
 * index. The entry lies in that day when its place is below the day's running total and count
 * added up; a day of count 0 shares its running total with the next day, which `day desc` puts
 * first.
 */
export function dayAtOffsetQuery(sort: 'asc' | 'desc') {
  return (db: Db, organizationId: string, firstDay: number, endDay: number, offset: number) => {
    const target =
      sort === 'asc'
        ? sql`bounds.lo + ${unplannedInteger(db, offset)}`
        : sql`bounds.hi - 1 - ${unplannedInteger(db, offset)}`;
    const query = sql<{
      lo: number;
      hi: number;
      day: number | null;
      earlier: number | null;
      count: number | null;
    }>`select bounds.lo, bounds.hi, hit.day, hit.earlier, hit.count
      from (select ${earlierThan(db, organizationId, firstDay)} as lo,
        ${earlierThan(db, organizationId, endDay)} as hi) as bounds
      left join encounter_day_counts as hit
        on hit.organization_id = ${unplannedText(db, organizationId)} and hit.day = (
          select day from encounter_day_counts
          where organization_id = ${unplannedText(db, organizationId)} and earlier <= ${target}
          order by earlier desc, day desc limit 1)`;
    return { compile: () => query.compile(db) };
  };
}

const DAY_AT_OFFSET = {
  asc: preparedQuery(dayAtOffsetQuery('asc'), { turnBatched: true }),
  desc: preparedQuery(dayAtOffsetQuery('desc'), { turnBatched: true }),
};

/** The same within hours [firstHour, endHour): where in its day an offset lands. */
export function hourAtOffset(
  db: Db,
  sort: 'asc' | 'desc',
  organizationId: string,
  firstHour: number,
  endHour: number,
  offset: number,
): Promise<UnitAtOffset> {
  return rollupAtOffset(db, 'hour', sort, organizationId, firstHour, endHour, offset);
}

/**
 * A walk over a roll-up's counts: a day's hours (at most 24 rows), or the days when their running
 * totals disagree with the counts. On SQLite the rows are read in order and the walk stops at the
 * target; a window function over every row cost about 0.6 ms a call. PostgreSQL sums them with a
 * window function in one statement, whose plan walks the roll-up's index in order and stops at
 * the target too.
 */
async function rollupAtOffset(
  db: Db,
  rollup: CountRollup,
  sort: 'asc' | 'desc',
  organizationId: string,
  first: number,
  end: number,
  offset: number,
): Promise<UnitAtOffset> {
  const sqlite = sqliteReadConnection(db);
  if (sqlite !== undefined) {
    let walks = rollupWalks.get(sqlite);
    if (!walks) {
      walks = new Map();
      rollupWalks.set(sqlite, walks);
    }
    const key = `${rollup} ${sort}`;
    let statement = walks.get(key);
    if (!statement) {
      statement = sqlite.prepare(ROLLUP_WALK_SQL(rollup, sort)).raw(true);
      walks.set(key, statement);
    }
    return walkTo(statement.iterate(organizationId, first, end) as Iterable<[number, number]>, offset);
  }
  if (isSqlite(db)) {
    // Inside a transaction, through Kysely: SQLite has no LATERAL for PostgreSQL's statement below.
    const { rows } = await db.executeQuery<{ [column: string]: number }>(
      CompiledQuery.raw(ROLLUP_WALK_SQL(rollup, sort), [organizationId, first, end]),
    );
    return walkTo(
      rows.map((row): [number, number] => [row[rollup]!, row.count!]),
      offset,
    );
  }
  const [row] = await ROLLUP_AT_OFFSET[rollup][sort](db, organizationId, first, end, offset);
  if (row?.place != null) return { at: Number(row.place), before: Number(row.before) };
  return { past: Number(row?.total ?? 0) };
}

/** The first day or hour, of rows in order, whose entries take the count past `offset`. */
function walkTo(rows: Iterable<[number, number]>, offset: number): UnitAtOffset {
  let before = 0;
  for (const [at, count] of rows) {
    if (before + count > offset) return { at, before };
    before += count;
  }
  return { past: before };
}

/** SQLite's walk, its values kept from the planner as in unplannedValue.ts. */
const ROLLUP_WALK_SQL = (rollup: CountRollup, sort: 'asc' | 'desc') =>
  `select ${rollup}, count from ${COUNT_ROLLUPS[rollup].table} where organization_id = cast(? as text) and ${rollup} >= cast(? as integer) and ${rollup} < cast(? as integer) order by ${rollup} ${sort}`;

const rollupWalks = new WeakMap<SqliteReadConnection, Map<string, SQLite.Statement>>();

/**
 * One row: the day or hour and the entries before it, or (none holding the offset) the total.
 * The total is read by the same statement, so in the same snapshot as the search that found
 * nothing; the scalar subquery runs only then.
 */
function rollupAtOffsetQuery(rollup: CountRollup, sort: 'asc' | 'desc') {
  const order = sql.raw(sort === 'asc' ? 'asc' : 'desc');
  const table = sql.table(COUNT_ROLLUPS[rollup].table);
  const unit = sql.ref(rollup);
  return preparedQuery(
    (db, organizationId: string, first: number, end: number, offset: number) => {
      const rows = sql`from ${table}
        where organization_id = ${organizationId} and ${unit} >= ${first} and ${unit} < ${end}`;
      const query = sql<{
        place: number | null;
        before: number | null;
        total: number | null;
      }>`select hit.place, hit.before,
        case when hit.place is null then (select sum(count) ${rows}) end as total
      from (select 1) as one left join lateral (
        select place, running - count as before from (
          select ${unit} as place, count, sum(count) over (order by ${unit} ${order}) as running ${rows}
        ) as walked where running > ${offset} order by place ${order} limit 1
      ) as hit on true`;
      return { compile: () => query.compile(db) };
    },
    { turnBatched: true },
  );
}

const ROLLUP_AT_OFFSET = {
  day: { asc: rollupAtOffsetQuery('day', 'asc'), desc: rollupAtOffsetQuery('day', 'desc') },
  hour: { asc: rollupAtOffsetQuery('hour', 'asc'), desc: rollupAtOffsetQuery('hour', 'desc') },
};

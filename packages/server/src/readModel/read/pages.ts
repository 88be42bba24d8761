/**
 * Pages of a caller's encounter list, read from the read model's list index. Every read takes
 * the caller's organization (the tenant filter is in the SQL, never in a handler), and
 * demo/training encounters are never listed.
 */
import { sql } from 'kysely';
import type { SortOrder } from '../../contract/listQuery.js';
import { type Db, pgPoolOf } from '../../database/connection.js';
import { preparedQuery } from '../../database/preparedQuery.js';
import { unplannedInteger, unplannedText } from '../../database/unplannedValue.js';
import { DAY_MS, dayOf, HOUR_MS } from '../../time.js';
import { dayAtOffset, hourAtOffset } from './countRollups.js';
import { countOnIndex } from './counts.js';
import { AFTER_LATEST_MS, type CreatedWindow, EARLIEST_MS } from './createdWindow.js';

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
 * the same transaction as every encounter write) says in which day the offset lands, by one
 * search of its days' running totals, and on a busy day the per-hour roll-up in which hour, so the
 * scan starts there and skips only the entries before the offset within it: the cost is that
 * search, at most a day's hours, and at most one hour's entries, instead of `offset` entries.
 * Chosen over a per-organization rank or checkpoint rows because it costs little at import: an
 * encounter inserted early in the order would shift every later rank or checkpoint, while the
 * roll-ups change one day's and one hour's count and the running totals of the days after it, one
 * row a day, restated once per encounter write (an import's batch of up to 2,000). Its limit: an
 * organization with more than a few thousand encounters in one hour skips up to that hour's
 * entries (see docs/benchmarks.md).
 */
export async function listEncounterPage(db: Db, organizationId: string, page: ListPage): Promise<PageRow[]> {
  const { sort, limit } = page;
  const bounds = await pageBounds(db, organizationId, page);
  const reads =
    bounds.offset >= SKIP_ON_INDEX_FROM && pgPoolOf(db) !== undefined
      ? PAGE_READS_SKIPPING_ON_INDEX
      : PAGE_READS;
  return reads[sort](db, organizationId, bounds.startMs, bounds.endMs, limit, bounds.offset);
}

/** Below this offset the scan simply skips entries: cheaper than asking the roll-up. */
const SKIP_BY_DAYS_FROM = 1000;

/**
 * From this many entries into the offset's day, the hour roll-up says in which hour the offset
 * lands, and the page skips only that hour's entries before it. On SQLite at 1,000,000
 * encounters a skipped entry cost about 0.035 µs (a page skipping 2,000 read in 91 µs, one
 * skipping none in 20 µs) and the walk of a day's hours 5 µs: the walk pays from about 150
 * entries, and on PostgreSQL it is one more statement of the turn. At 100,000 encounters a day
 * holds about 210 and the busiest 550, so most pages there skip by days alone.
 */
const SKIP_BY_HOURS_FROM = 200;

interface Bounds {
  startMs: number;
  endMs: number;
  offset: number;
}

/**
 * The same page, as a window that starts (or, descending, ends) at the day the offset lands in, or
 * at its hour on a busy day.
 */
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
    const day = await dayAtOffset(db, 'asc', organizationId, firstFullDay, endFullDay, rest);
    if ('past' in day) return { startMs: endFullDay * DAY_MS, endMs, offset: rest - day.past };
    const inDay = rest - day.before;
    const hour =
      inDay < SKIP_BY_HOURS_FROM ? undefined : await hourOfDayAt(db, 'asc', organizationId, day.at, inDay);
    if (hour === undefined) return { startMs: day.at * DAY_MS, endMs, offset: inDay };
    return { startMs: hour.at * HOUR_MS, endMs, offset: inDay - hour.before };
  }
  const tail =
    endFullDay * DAY_MS < endMs ? await countOnIndex(db, organizationId, endFullDay * DAY_MS, endMs) : 0;
  if (page.offset < tail) return plain;
  const rest = page.offset - tail;
  const day = await dayAtOffset(db, 'desc', organizationId, firstFullDay, endFullDay, rest);
  if ('past' in day) return { startMs, endMs: firstFullDay * DAY_MS, offset: rest - day.past };
  const inDay = rest - day.before;
  const hour =
    inDay < SKIP_BY_HOURS_FROM ? undefined : await hourOfDayAt(db, 'desc', organizationId, day.at, inDay);
  if (hour === undefined) return { startMs, endMs: (day.at + 1) * DAY_MS, offset: inDay };
  return { startMs, endMs: (hour.at + 1) * HOUR_MS, offset: inDay - hour.before };
}

/**
 * The hour of `day` in which its entry at `offset` lies (in `sort` order), with the entries of the
 * day's hours before it. Undefined when the hours hold fewer entries than that, which on PostgreSQL
 * an import committed after the day search can make so: the page then skips from the day's start.
 */
async function hourOfDayAt(
  db: Db,
  sort: SortOrder,
  organizationId: string,
  day: number,
  offset: number,
): Promise<{ at: number; before: number } | undefined> {
  const firstHour = (day * DAY_MS) / HOUR_MS;
  const hour = await hourAtOffset(db, sort, organizationId, firstHour, firstHour + DAY_MS / HOUR_MS, offset);
  return 'past' in hour ? undefined : hour;
}

export interface PageRow {
  summary: string;
  /**
   * The summary's length in bytes as the database stores it (UTF-8 on SQLite, and on PostgreSQL
   * in a UTF8 database): the list body is sized from these instead of measuring every summary
   * again, a tenth of a list answer's instructions. listBody.ts checks each against the summary.
   */
  summary_bytes: number;
  etag: string;
  patient_id: string;
}

/** The list index's entries of a caller's window, in the list's order. */
function listRange(db: Db, organizationId: string, startMs: number, endMs: number, sort: SortOrder) {
  return db
    .selectFrom('encounter_reads')
    .where('organization_id', '=', unplannedText(db, organizationId))
    .where('demo_training', '=', sql.lit(0))
    .where('created_at', '>=', unplannedInteger(db, startMs))
    .where('created_at', '<', unplannedInteger(db, endMs))
    .orderBy('created_at', sort)
    .orderBy('encounter_id', sort);
}

/**
 * The page read's statement (exported so a test can ask the planner how it runs). Its plan is the
 * list index's range in the list's order whatever the values, so on SQLite they are kept from the
 * planner (database/unplannedValue.ts).
 */
export function pageQuery(
  db: Db,
  organizationId: string,
  startMs: number,
  endMs: number,
  limit: number,
  offset: number,
  sort: SortOrder,
) {
  return listRange(db, organizationId, startMs, endMs, sort)
    .select(['summary', sql<number>`octet_length(summary)`.as('summary_bytes'), 'etag', 'patient_id'])
    .limit(unplannedInteger(db, limit))
    .offset(unplannedInteger(db, offset));
}

function pageRead(sort: SortOrder) {
  return preparedQuery(
    (db, organizationId: string, startMs: number, endMs: number, limit: number, offset: number) =>
      pageQuery(db, organizationId, startMs, endMs, limit, offset, sort),
    { turnBatched: true },
  );
}

/**
 * The same page with the skipped entries read from the list index alone (an index-only scan),
 * then each of the page's rows by its primary key. PostgreSQL keeps the summaries in the table,
 * not the index, so skipping an entry by the plain read fetches its row: at 1,000,000
 * encounters, skipping 2,823 entries took 1.3 ms that way and 0.6 ms this way (5,000: 3.3 and
 * 1.0 ms). For a short skip the primary-key lookups cost more than they save (50 entries:
 * 0.03 ms plain, 0.18 ms this way). SQLite's table is the list index itself, so it never needs this.
 */
function pageReadSkippingOnIndex(sort: SortOrder) {
  return preparedQuery(
    (db, organizationId: string, startMs: number, endMs: number, limit: number, offset: number) =>
      db
        .selectFrom(
          listRange(db, organizationId, startMs, endMs, sort)
            .select(['encounter_id', 'created_at'])
            .limit(limit)
            .offset(offset)
            .as('page'),
        )
        .innerJoin('encounter_reads as row', (join) =>
          join
            .onRef('row.encounter_id', '=', 'page.encounter_id')
            .on('row.organization_id', '=', organizationId),
        )
        .select([
          'row.summary',
          sql<number>`octet_length(${sql.ref('row.summary')})`.as('summary_bytes'),
          'row.etag',
          'row.patient_id',
        ])
        .orderBy('page.created_at', sort)
        .orderBy('page.encounter_id', sort),
    { turnBatched: true },
  );
}

/** From this offset PostgreSQL's page skips its entries on the index (measured crossover: 300-400). */
const SKIP_ON_INDEX_FROM = 400;

const PAGE_READS = { asc: pageRead('asc'), desc: pageRead('desc') };
const PAGE_READS_SKIPPING_ON_INDEX = {
  asc: pageReadSkippingOnIndex('asc'),
  desc: pageReadSkippingOnIndex('desc'),
};

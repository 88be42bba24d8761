/**
 * Deep list pages, placed by the day and hour roll-ups (and on PostgreSQL read by keys from the
 * list index), against the list's order computed here: on both stores, in and out of a
 * transaction, and with an hour roll-up that holds fewer entries than its day.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import type { SortOrder } from '../../../src/contract/listQuery.js';
import { type Db, inTransaction, type Store } from '../../../src/database/connection.js';
import { BARE_PLACEHOLDER } from '../../../src/database/unplannedValue.js';
import { dayAtOffsetQuery } from '../../../src/readModel/read/countRollups.js';
import {
  countEncounters,
  indexCountQuery,
  windowCountBounds,
  windowCountQuery,
} from '../../../src/readModel/read/counts.js';
import type { CreatedWindow } from '../../../src/readModel/read/createdWindow.js';
import { listEncounterPage, pageQuery } from '../../../src/readModel/read/pages.js';
import { rebuildEncounterCounts } from '../../../src/store/clinicalWrites.js';
import { organizationsWithDriftedCounts } from '../../../src/store/countRollupDrift.js';
import { DAY_MS, HOUR_MS } from '../../../src/time.js';
import { FixtureBuilder } from '../../support/fixtures.js';
import { createTestStore, forEachStore } from '../../support/stores.js';

const DAY0 = Date.UTC(2026, 2, 2);
const DAY1 = DAY0 + DAY_MS;

/**
 * Two busy days: the first spread over ten hours, with encounters on hour boundaries, 1 ms before
 * them and tied to the millisecond; the second with 600 in one hour, so a page placed by its hour
 * still skips hundreds of entries.
 */
function createdTimes(): number[] {
  const times: number[] = [];
  for (let i = 0; i < 700; i++) {
    const hour = DAY0 + (8 + (i % 10)) * HOUR_MS;
    const shape = i % 7;
    if (shape === 0) times.push(hour);
    else if (shape === 1) times.push(hour - 1);
    else if (shape === 2) times.push(hour + 1_000);
    else times.push(hour + ((i * 7_919) % HOUR_MS));
  }
  for (let i = 0; i < 600; i++)
    times.push(DAY1 + 14 * HOUR_MS + ((i * 104_729) % HOUR_MS) - (i % 5 === 0 ? 0 : 1));
  for (let i = 0; i < 200; i++) times.push(DAY1 + (9 + (i % 12)) * HOUR_MS + (i % 3) * 59 * 60_000);
  return times;
}

forEachStore('list pages placed by day and hour', (kind) => {
  let store: Store;
  let organizationId: string;
  let entries: { id: string; createdAt: number }[];

  before(async () => {
    store = await createTestStore(kind);
    const fixtures = new FixtureBuilder(store.db);
    organizationId = await fixtures.organization();
    const patientId = await fixtures.patient(organizationId);
    const times = createdTimes();
    const ids = await fixtures.encounters(organizationId, patientId, times);
    entries = ids.map((id, i) => ({ id, createdAt: times[i]! }));
  });
  after(() => store.close());

  function expected(sort: SortOrder, window: CreatedWindow, limit: number, offset: number): string[] {
    const inWindow = entries.filter(
      (e) =>
        (window.startMs === undefined || e.createdAt >= window.startMs) &&
        (window.endMs === undefined || e.createdAt < window.endMs),
    );
    inWindow.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    if (sort === 'desc') inWindow.reverse();
    return inWindow.slice(offset, offset + limit).map((e) => e.id);
  }

  async function page(db: Db, sort: SortOrder, window: CreatedWindow, limit: number, offset: number) {
    const rows = await listEncounterPage(db, organizationId, { sort, window, limit, offset });
    return rows.map((row) => (JSON.parse(row.summary) as { encounter_id: string }).encounter_id);
  }

  const windows: [string, CreatedWindow][] = [
    ['no window', {}],
    [
      'a window from the middle of the first hour to the middle of the last',
      { startMs: DAY0 + 8 * HOUR_MS + 1_800_000, endMs: DAY1 + 20 * HOUR_MS + 1 },
    ],
    ['a window of whole days', { startMs: DAY0, endMs: DAY1 + DAY_MS }],
    [
      'a window from the middle of the first hour to the end of the last day',
      { startMs: DAY0 + 8 * HOUR_MS + 1_800_000, endMs: DAY1 + DAY_MS },
    ],
    [
      'a window from the first day to the middle of the last hour',
      { startMs: DAY0, endMs: DAY1 + 20 * HOUR_MS + 1 },
    ],
  ];
  const offsets = [999, 1000, 1001, 1099, 1100, 1234, 1299, 1300, 1301, 1450, 1499, 1500, 1600];

  async function assertEveryPage(
    read: (sort: SortOrder, window: CreatedWindow, limit: number, offset: number) => Promise<string[]>,
  ) {
    for (const [name, window] of windows) {
      for (const sort of ['asc', 'desc'] as const) {
        for (const offset of offsets) {
          for (const limit of [1, 50]) {
            assert.deepEqual(
              await read(sort, window, limit, offset),
              expected(sort, window, limit, offset),
              `${name}, ${sort}, offset ${offset}, limit ${limit}`,
            );
          }
        }
      }
    }
  }

  test('happy: every deep page is the slice of the list order at its offset, in both orders, with and without a window', async () => {
    await assertEveryPage((sort, window, limit, offset) => page(store.db, sort, window, limit, offset));
  });

  test('happy: read inside a transaction, the deep pages are the same', async () => {
    await inTransaction(store.db, (tx) =>
      assertEveryPage((sort, window, limit, offset) => page(tx, sort, window, limit, offset)),
    );
  });

  test("edge: a window's count is exact with its ends on, just before and just after day and hour boundaries, or absent", async () => {
    const HALF_HOUR = HOUR_MS / 2;
    const instants = [
      DAY0 - 1,
      DAY0,
      DAY0 + 8 * HOUR_MS - 1,
      DAY0 + 8 * HOUR_MS,
      DAY0 + 8 * HOUR_MS + 1,
      DAY0 + 8 * HOUR_MS + HALF_HOUR,
      DAY0 + 12 * HOUR_MS + 1_000,
      DAY1 - 1,
      DAY1,
      DAY1 + 1,
      DAY1 + 14 * HOUR_MS - 1,
      DAY1 + 14 * HOUR_MS,
      DAY1 + 14 * HOUR_MS + HALF_HOUR,
      DAY1 + 15 * HOUR_MS,
      DAY1 + 20 * HOUR_MS + 1,
      DAY1 + DAY_MS,
    ];
    const ends = [undefined, ...instants];
    for (const startMs of ends) {
      for (const endMs of ends) {
        if (startMs !== undefined && endMs !== undefined && startMs >= endMs) continue;
        const expectedCount = entries.filter(
          (e) =>
            (startMs === undefined || e.createdAt >= startMs) && (endMs === undefined || e.createdAt < endMs),
        ).length;
        assert.equal(
          await countEncounters(store.db, organizationId, { startMs, endMs }),
          expectedCount,
          `[${startMs === undefined ? '-' : new Date(startMs).toISOString()}, ${endMs === undefined ? '-' : new Date(endMs).toISOString()})`,
        );
      }
    }
  });

  test('edge: with an hour roll-up holding fewer entries than its day, pages skip from the day start and stay exact', async () => {
    // What an import committed between the day search and the hour search can leave on PostgreSQL.
    await store.db
      .deleteFrom('encounter_hour_counts')
      .where('organization_id', '=', organizationId)
      .where('hour', '>=', DAY1 / HOUR_MS)
      .execute();
    try {
      await assertEveryPage((sort, window, limit, offset) => page(store.db, sort, window, limit, offset));
    } finally {
      await inTransaction(store.db, (tx) => rebuildEncounterCounts(tx, organizationId));
    }
  });

  test('edge: with days whose count fell to 0 before, between and after the busy ones, every deep page stays exact', async () => {
    // What re-imports that move a day's encounters to other days leave behind.
    const total = entries.length;
    const empty: [number, number][] = [
      [DAY0 / DAY_MS - 2, 0],
      [DAY1 / DAY_MS + 1, total],
      [DAY1 / DAY_MS + 3, total],
    ];
    await store.db
      .insertInto('encounter_day_counts')
      .values(empty.map(([day, earlier]) => ({ organization_id: organizationId, day, count: 0, earlier })))
      .execute();
    try {
      assert.deepEqual(await organizationsWithDriftedCounts(store.db), []);
      await assertEveryPage((sort, window, limit, offset) => page(store.db, sort, window, limit, offset));
    } finally {
      await store.db
        .deleteFrom('encounter_day_counts')
        .where('organization_id', '=', organizationId)
        .where('count', '=', 0)
        .execute();
    }
  });

  // Last in the suite: the statistics it stores stay in this suite's database.
  test("happy: a page and a window's count are ranges of their index whatever the values, after a full ANALYZE too", async () => {
    // A full ANALYZE stores samples of the indexes, with which SQLite plans by the bound values.
    if (kind === 'sqlite') await sql`ANALYZE`.execute(store.db);
    else await sql`ANALYZE encounter_reads, encounters`.execute(store.db);
    const plans = await store.db.transaction().execute(async (tx) => {
      // Tables this small would be scanned anyway; the question is whether the index serves them.
      if (kind === 'postgres') await sql`SET LOCAL enable_seqscan = off`.execute(tx);
      const explain = kind === 'postgres' ? 'EXPLAIN' : 'EXPLAIN QUERY PLAN';
      const plan = async (query: { sql: string; parameters: readonly unknown[] }) => {
        // SQLite plans with a bare placeholder's value, so none may be left outside a CAST.
        if (kind === 'sqlite') assert.doesNotMatch(query.sql, BARE_PLACEHOLDER, query.sql);
        return JSON.stringify(
          (await tx.executeQuery(CompiledQuery.raw(`${explain} ${query.sql}`, [...query.parameters]))).rows,
        );
      };
      return {
        page: await plan(pageQuery(store.db, organizationId, DAY0, DAY1 + DAY_MS, 50, 10, 'desc').compile()),
        partialDay: await plan(indexCountQuery(store.db, organizationId, DAY0 + HOUR_MS, DAY1).compile()),
        // Whole days, whole hours on both sides and partial hours at both ends.
        dayAtOffset: await plan(
          dayAtOffsetQuery('desc')(
            store.db,
            organizationId,
            DAY0 / DAY_MS,
            DAY1 / DAY_MS + 1,
            1_000,
          ).compile(),
        ),
        count: await plan(
          windowCountQuery(
            store.db,
            organizationId,
            ...windowCountBounds(DAY0 - DAY_MS + 90 * 60_000, DAY1 + 14 * HOUR_MS + HOUR_MS / 2),
          ).compile(),
        ),
      };
    });
    if (kind === 'postgres') {
      assert.match(plans.page, /Index Scan[^"]* on encounter_reads\b/);
      assert.doesNotMatch(plans.page, /Sort/, 'the index gives the list order: nothing sorted');
      assert.match(plans.partialDay, /Index (Only )?Scan on encounters_list\b/);
      const throughIndex = (index: string) =>
        new RegExp(`Index (Only )?Scan (Backward )?(using|on) ${index}\\b`);
      for (const index of ['encounter_day_counts_pk', 'encounter_hour_counts_pk', 'encounters_list'])
        assert.match(plans.count, throughIndex(index));
      assert.doesNotMatch(plans.count, /Seq Scan/);
      assert.match(plans.dayAtOffset, throughIndex('encounter_day_counts_earlier'));
      assert.doesNotMatch(plans.dayAtOffset, /Seq Scan|Sort/);
    } else {
      assert.match(
        plans.page,
        /SEARCH encounter_reads USING PRIMARY KEY \(organization_id=\? AND demo_training=\? AND created_at>\? AND created_at<\?\)/,
      );
      assert.doesNotMatch(plans.page, /TEMP B-TREE/, 'the index gives the list order: nothing sorted');
      // The roll-ups' plans, with rows for more than two days: test/database/unplannedValue.test.ts.
      assert.match(
        plans.count,
        /SEARCH encounters USING COVERING INDEX \w+ \(organization_id=\? AND demo_training=\? AND created_at>\? AND created_at<\?\)/,
      );
      assert.match(
        plans.partialDay,
        /SEARCH encounters USING COVERING INDEX \w+ \(organization_id=\? AND demo_training=\? AND created_at>\? AND created_at<\?\)/,
      );
    }
  });
});

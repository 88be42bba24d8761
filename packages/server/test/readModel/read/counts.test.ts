/**
 * A window's count: the bounds of its five parts, and the count against the entries themselves on
 * a fixture where every part holds some, before 1970 too, one call at a time and many at once;
 * and the day a deep offset lands in, found by the days' running totals.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Store } from '../../../src/database/connection.js';
import { dayAtOffset, dayAtOffsetQuery } from '../../../src/readModel/read/countRollups.js';
import { countEncounters, windowCountBounds } from '../../../src/readModel/read/counts.js';
import type { CreatedWindow } from '../../../src/readModel/read/createdWindow.js';
import { DAY_MS, HOUR_MS } from '../../../src/time.js';
import { FixtureBuilder } from '../../support/fixtures.js';
import { createTestStore, forEachStore } from '../../support/stores.js';

const DAY = Date.UTC(2026, 2, 2) / DAY_MS;
const MINUTE = 60_000;
const INT32_MAX = 2 ** 31 - 1;

test('happy: a window across days counts whole days, the whole hours on each side and the partial hours at its ends', () => {
  const start = (DAY - 2) * DAY_MS + 8 * HOUR_MS + 30 * MINUTE;
  const end = (DAY + 1) * DAY_MS + 14 * HOUR_MS + 5 * MINUTE;
  assert.deepEqual(windowCountBounds(start, end), [
    DAY - 1,
    DAY + 1,
    (DAY - 2) * 24 + 9,
    (DAY - 1) * 24,
    (DAY + 1) * 24,
    (DAY + 1) * 24 + 14,
    start,
    (DAY - 2) * DAY_MS + 9 * HOUR_MS,
    (DAY + 1) * DAY_MS + 14 * HOUR_MS,
    end,
  ]);
});

test('edge: a window whose ends lie on day boundaries is whole days alone', () => {
  const bounds = windowCountBounds((DAY - 1) * DAY_MS, (DAY + 1) * DAY_MS);
  assert.deepEqual(bounds.slice(0, 2), [DAY - 1, DAY + 1]);
  for (const [first, end] of [bounds.slice(2, 4), bounds.slice(4, 6), bounds.slice(6, 8), bounds.slice(8)])
    assert.equal(first, end, `${bounds}`);
});

test('edge: a window within one day is its whole hours and the partial hours at its ends, or within one hour the index alone', () => {
  const dayStart = DAY * DAY_MS;
  assert.deepEqual(windowCountBounds(dayStart + 30 * MINUTE, dayStart + 3 * HOUR_MS + MINUTE), [
    0,
    0,
    DAY * 24 + 1,
    DAY * 24 + 3,
    0,
    0,
    dayStart + 30 * MINUTE,
    dayStart + HOUR_MS,
    dayStart + 3 * HOUR_MS,
    dayStart + 3 * HOUR_MS + MINUTE,
  ]);
  assert.deepEqual(windowCountBounds(dayStart + MINUTE, dayStart + 2 * MINUTE), [
    0,
    0,
    0,
    0,
    0,
    0,
    dayStart + MINUTE,
    dayStart + 2 * MINUTE,
    0,
    0,
  ]);
});

test("edge: an absent end leaves its side empty, and every day or hour fits PostgreSQL's integer", () => {
  const time = DAY * DAY_MS + 90 * MINUTE;
  const fromOnly = windowCountBounds(time, undefined);
  const untilOnly = windowCountBounds(undefined, time);
  assert.deepEqual(fromOnly.slice(4), [0, 0, time, DAY * DAY_MS + 2 * HOUR_MS, 0, 0]);
  assert.deepEqual(untilOnly.slice(2, 8), [0, 0, DAY * 24, DAY * 24 + 1, 0, 0]);
  for (const bounds of [fromOnly, untilOnly])
    for (const dayOrHour of bounds.slice(0, 6)) assert.ok(Math.abs(dayOrHour) <= INT32_MAX, `${bounds}`);
});

test('edge: before 1970 the days and hours still round inwards', () => {
  const start = Date.UTC(1969, 11, 30, 22, 30);
  const end = Date.UTC(1970, 0, 1, 1, 30);
  assert.deepEqual(windowCountBounds(start, end), [
    -1,
    0,
    -25,
    -24,
    0,
    1,
    start,
    Date.UTC(1969, 11, 30, 23),
    Date.UTC(1970, 0, 1, 1),
    end,
  ]);
});

/**
 * Five days, each with entries in several hours, on and beside hour boundaries; and two days
 * around the start of 1970.
 */
function createdTimes(): number[] {
  const times: number[] = [];
  for (const day of [DAY - 2, DAY - 1, DAY, DAY + 1, DAY + 2, -1, 0])
    for (let i = 0; i < 60; i++) {
      const hour = day * DAY_MS + ((i * 5) % 24) * HOUR_MS;
      times.push(i % 4 === 0 ? hour : i % 4 === 1 ? hour - 1 : hour + ((i * 7_919 * 1_000) % HOUR_MS));
    }
  // Every third hour's partial hours too: 20 and 50 minutes in.
  for (const day of [DAY - 2, DAY - 1, DAY, DAY + 1, DAY + 2, -1, 0])
    for (let hour = 0; hour < 24; hour += 3)
      times.push(day * DAY_MS + hour * HOUR_MS + 20 * MINUTE, day * DAY_MS + hour * HOUR_MS + 50 * MINUTE);
  return times;
}

/** Windows whose five parts all hold entries, and others around them. */
function windows(): CreatedWindow[] {
  const at = (day: number, hours: number, minutes = 0) => day * DAY_MS + hours * HOUR_MS + minutes * MINUTE;
  return [
    { startMs: at(DAY - 2, 6, 17), endMs: at(DAY + 1, 21, 43) },
    { startMs: at(DAY - 2, 0, 1), endMs: at(DAY + 2, 23, 59) },
    { startMs: at(DAY - 1, 10), endMs: at(DAY + 1, 10) },
    { startMs: at(DAY, 0), endMs: at(DAY + 2, 0) },
    { startMs: at(DAY, 4, 59), endMs: at(DAY, 15, 1) },
    { startMs: at(DAY, 5), endMs: at(DAY, 5, 30) },
    { startMs: at(DAY - 1, 12, 30) },
    { endMs: at(DAY + 1, 12, 30) },
    { startMs: at(-1, 3, 30), endMs: at(0, 22, 30) },
    { endMs: at(0, 10) },
    { startMs: at(-1, 20) },
  ];
}

forEachStore("a window's count", (kind) => {
  let store: Store;
  let organizationId: string;
  let times: number[];

  before(async () => {
    store = await createTestStore(kind);
    const fixtures = new FixtureBuilder(store.db);
    organizationId = await fixtures.organization();
    const patientId = await fixtures.patient(organizationId);
    times = createdTimes();
    await fixtures.encounters(organizationId, patientId, times);
  });
  after(() => store.close());

  const expected = ({ startMs, endMs }: CreatedWindow) =>
    times.filter((t) => (startMs === undefined || t >= startMs) && (endMs === undefined || t < endMs)).length;

  test('happy: each window counts exactly the entries in it', async () => {
    for (const window of windows()) {
      assert.equal(
        await countEncounters(store.db, organizationId, window),
        expected(window),
        JSON.stringify(window),
      );
    }
  });

  test('happy: the first window has entries in each of its five parts', () => {
    const { startMs, endMs } = windows()[0]!;
    const bounds = windowCountBounds(startMs, endMs);
    const units = [DAY_MS, HOUR_MS, HOUR_MS, 1, 1];
    const inParts = units.map((unit, part) => {
      const [first, end] = [bounds[2 * part]! * unit, bounds[2 * part + 1]! * unit];
      return times.filter((t) => t >= first && t < end).length;
    });
    assert.ok(
      inParts.every((n) => n > 0),
      `${inParts}`,
    );
  });

  test("edge: a deep offset's day is the busy day, not a day of count 0 that shares its running total", async () => {
    // A day whose encounters all moved away, between the days around 1970 and the busy ones. Read
    // alone, the statement shows which of the two tied days its order picks: the answer after it
    // would be right either way, since a day that does not hold the entry is walked past.
    const emptyDay = 100;
    const earlier = times.filter((t) => t < emptyDay * DAY_MS).length;
    await store.db
      .insertInto('encounter_day_counts')
      .values({ organization_id: organizationId, day: emptyDay, count: 0, earlier })
      .execute();
    try {
      const busyDay = DAY - 2;
      const busy = times.filter((t) => Math.floor(t / DAY_MS) === busyDay).length;
      // Oldest first, the first entry after 1970's days; newest first, the last entry of the busy day.
      const cases = [
        { sort: 'asc', endDay: DAY + 3, offset: 0 },
        { sort: 'desc', endDay: busyDay + 1, offset: busy - 1 },
      ] as const;
      for (const { sort, endDay, offset } of cases) {
        const found = await store.db.executeQuery<{ day: number | string }>(
          dayAtOffsetQuery(sort)(store.db, organizationId, 1, endDay, offset).compile(),
        );
        assert.equal(Number(found.rows[0]!.day), busyDay, sort);
        assert.deepEqual(await dayAtOffset(store.db, sort, organizationId, 1, endDay, offset), {
          at: busyDay,
          before: 0,
        });
      }
    } finally {
      await store.db
        .deleteFrom('encounter_day_counts')
        .where('organization_id', '=', organizationId)
        .where('day', '=', emptyDay)
        .execute();
    }
  });

  test('happy: windows counted at once, as concurrent requests are, each get their own count', async () => {
    const all = windows();
    const counts = await Promise.all(all.map((window) => countEncounters(store.db, organizationId, window)));
    assert.deepEqual(counts, all.map(expected));
    assert.ok(new Set(counts).size > 5, `the windows differ: ${counts}`);
  });
});

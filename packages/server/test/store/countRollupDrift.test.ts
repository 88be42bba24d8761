/**
 * Encounter counts that no longer agree with their encounters, as an import of an earlier release
 * run after a roll-up's migration leaves them, are found and rebuilt by the store upgrade that
 * `eds migrate` runs; counts kept by this release's writes are found whole and left alone.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { sql } from 'kysely';
import type { Store } from '../../src/database/connection.js';
import { COUNT_ROLLUPS, type CountRollup } from '../../src/database/countRollups.js';
import { organizationsWithDriftedCounts } from '../../src/store/countRollupDrift.js';
import { DAY_MS, dayOf, HOUR_MS, hourOf } from '../../src/time.js';
import { upgradeStore } from '../../src/upgradeStore.js';
import { FixtureBuilder } from '../support/fixtures.js';
import { createTestStore, forEachStore } from '../support/stores.js';

const DAY0 = Date.UTC(2026, 4, 4);

/** Each day's running total is the listable encounters on the organization's earlier days. */
type Counts = { hours: [number, number][]; days: [number, number][]; earlier: number[]; total: number };

/** The running totals the days make. */
function runningTotals(days: [number, number][]): number[] {
  let earlier = 0;
  return days.map(([, count]) => {
    const total = earlier;
    earlier += count;
    return total;
  });
}

forEachStore('encounter counts that drifted from their encounters', (kind) => {
  let store: Store;
  let fixtures: FixtureBuilder;
  let drifting: string;
  let steady: string;
  let patientId: string;

  before(async () => {
    store = await createTestStore(kind);
    fixtures = new FixtureBuilder(store.db);
  });
  after(() => store.close());

  // Two organizations with encounters over two days, on and just before hour boundaries.
  beforeEach(async () => {
    drifting = await fixtures.organization();
    steady = await fixtures.organization();
    patientId = await fixtures.patient(drifting);
    const times = [0, 1, 2, 3, 4, 5].flatMap((h) => [DAY0 + h * HOUR_MS, DAY0 + (h + 1) * HOUR_MS - 1]);
    await fixtures.encounters(drifting, patientId, [...times, DAY0 + DAY_MS + 30 * 60_000]);
    await fixtures.encounters(steady, await fixtures.patient(steady), times);
  });

  /** The organization's stored counts, and the ones its listable encounters make. */
  async function counts(organizationId: string): Promise<{ stored: Counts; fromEncounters: Counts }> {
    const db = store.db;
    const storedRollup = async (rollup: CountRollup): Promise<[number, number][]> => {
      const { rows } = await sql<{ unit: number; count: number }>`select ${sql.ref(rollup)} as unit, count
        from ${sql.table(COUNT_ROLLUPS[rollup].table)}
        where organization_id = ${organizationId} and count <> 0 order by unit`.execute(db);
      return rows.map((r) => [Number(r.unit), Number(r.count)]);
    };
    const total = await db
      .selectFrom('encounter_counts')
      .select('count')
      .where('organization_id', '=', organizationId)
      .executeTakeFirst();
    const encounters = await db
      .selectFrom('encounters')
      .select('created_at')
      .where('organization_id', '=', organizationId)
      .where('demo_training', '=', 0)
      .execute();
    const tally = (unitOf: (ms: number) => number): [number, number][] => {
      const byUnit = new Map<number, number>();
      for (const { created_at } of encounters) {
        const unit = unitOf(Number(created_at));
        byUnit.set(unit, (byUnit.get(unit) ?? 0) + 1);
      }
      return [...byUnit].sort(([a], [b]) => a - b);
    };
    const earlier = await db
      .selectFrom('encounter_day_counts')
      .select('earlier')
      .where('organization_id', '=', organizationId)
      .where('count', '<>', 0)
      .orderBy('day')
      .execute();
    const days = tally(dayOf);
    return {
      stored: {
        hours: await storedRollup('hour'),
        days: await storedRollup('day'),
        earlier: earlier.map((row) => Number(row.earlier)),
        total: Number(total?.count ?? 0),
      },
      fromEncounters: { hours: tally(hourOf), days, earlier: runningTotals(days), total: encounters.length },
    };
  }

  async function assertCountsAgree(organizationId: string): Promise<void> {
    const { stored, fromEncounters } = await counts(organizationId);
    assert.deepEqual(stored, fromEncounters);
  }

  /** Changes a stored count directly, as a writer that does not keep them would leave it. */
  async function addToStoredCount(
    organizationId: string,
    change: number,
    unit?: { rollup: 'hour' | 'day'; at: number },
  ): Promise<void> {
    const where =
      unit === undefined
        ? sql``
        : sql`and ${sql.ref(unit.rollup)} = ${(unit.rollup === 'hour' ? hourOf : dayOf)(unit.at)}`;
    const table = unit === undefined ? 'encounter_counts' : COUNT_ROLLUPS[unit.rollup].table;
    await sql`update ${sql.table(table)} set count = count + ${change}
      where organization_id = ${organizationId} ${where}`.execute(store.db);
  }

  /** Upgrades the store, and shows that only the drifted organization was rebuilt. */
  async function assertUpgradeRecounts(): Promise<void> {
    const steadyBefore = await counts(steady);
    assert.deepEqual(await organizationsWithDriftedCounts(store.db), [drifting]);
    const upgrade = await upgradeStore(store.db);
    assert.ok(upgrade.built.includes('encounter_counts'), upgrade.built.join());
    assert.deepEqual(upgrade.recounted, [drifting]);
    await assertCountsAgree(drifting);
    assert.deepEqual(await counts(steady), steadyBefore);
    assert.deepEqual(await organizationsWithDriftedCounts(store.db), []);
    assert.deepEqual((await upgradeStore(store.db)).recounted, [], 'a second upgrade finds nothing');
  }

  test('happy: counts kept by imports agree with the encounters, and an upgrade recounts nothing', async () => {
    await assertCountsAgree(drifting);
    await assertCountsAgree(steady);
    // Training encounters are never counted, so one written without counts is no drift.
    await store.db
      .updateTable('encounters')
      .set({ demo_training: 1 })
      .where('organization_id', '=', steady)
      .where('created_at', '=', DAY0)
      .execute();
    await addToStoredCount(steady, -1, { rollup: 'hour', at: DAY0 });
    await addToStoredCount(steady, -1, { rollup: 'day', at: DAY0 });
    await addToStoredCount(steady, -1);
    assert.deepEqual(await organizationsWithDriftedCounts(store.db), []);
    assert.deepEqual((await upgradeStore(store.db)).recounted, []);
  });

  test("happy: encounters re-imported onto earlier and later days move every later day's running total with them", async () => {
    // The fixture's first two encounters, both at the first day's first hour, written again.
    await fixtures.encounters(drifting, patientId, [DAY0 - 3 * DAY_MS, DAY0 + 5 * DAY_MS + HOUR_MS]);
    await assertCountsAgree(drifting);
    // Then the third onto a new day between two that have encounters: its own running total too.
    await fixtures.encounters(drifting, patientId, [
      DAY0 - 3 * DAY_MS,
      DAY0 + 5 * DAY_MS + HOUR_MS,
      DAY0 - DAY_MS,
    ]);
    await assertCountsAgree(drifting);
    assert.deepEqual(await organizationsWithDriftedCounts(store.db), []);
  });

  test('running totals that disagree with their days are recounted, though every count agrees', async () => {
    await store.db
      .updateTable('encounter_day_counts')
      .set((eb) => ({ earlier: eb('earlier', '+', 1) }))
      .where('organization_id', '=', drifting)
      .where('day', '=', dayOf(DAY0 + DAY_MS))
      .execute();
    await assertUpgradeRecounts();
  });

  test('an encounter moved to another hour of its day, its hours left behind, is recounted', async () => {
    // An earlier release's re-import: the day and the total still agree, the hours do not.
    await store.db
      .updateTable('encounters')
      .set({ created_at: DAY0 + 20 * HOUR_MS })
      .where('organization_id', '=', drifting)
      .where('created_at', '=', DAY0 + HOUR_MS - 1)
      .execute();
    await assertUpgradeRecounts();
  });

  test('an encounter added with its day and total but not its hour is recounted', async () => {
    // An earlier release's import after the hour roll-up's migration.
    const createdAt = DAY0 + 2 * DAY_MS;
    await store.db
      .insertInto('encounters')
      .values({
        id: 'enc_from_an_earlier_release',
        organization_id: drifting,
        patient_id: patientId,
        encounter_type: 'ambient',
        status: 'completed',
        date_of_service: createdAt,
        created_at: createdAt,
        updated_at: createdAt,
        demo_training: 0,
      })
      .execute();
    await store.db
      .insertInto('encounter_day_counts')
      .values({ organization_id: drifting, day: dayOf(createdAt), count: 1 })
      .execute();
    await addToStoredCount(drifting, 1);
    await assertUpgradeRecounts();
  });

  test('day counts that disagree with their hours are recounted, though their sum is the total', async () => {
    await addToStoredCount(drifting, -1, { rollup: 'day', at: DAY0 });
    await addToStoredCount(drifting, 1, { rollup: 'day', at: DAY0 + DAY_MS });
    await assertUpgradeRecounts();
  });

  test('a total that disagrees with its days is recounted, and a missing one created', async () => {
    await addToStoredCount(drifting, -2);
    await assertUpgradeRecounts();

    await store.db.deleteFrom('encounter_counts').where('organization_id', '=', drifting).execute();
    await assertUpgradeRecounts();
  });
});

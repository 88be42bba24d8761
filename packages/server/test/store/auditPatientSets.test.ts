/**
 * Disclosures stored by patient set (migration 009), on both stores: a set is stored once however
 * many records name it, the patient report reads every record that carried the patient and no
 * other, retention deletes a set only with the last record naming it, existing disclosures
 * survive the migration both ways, and on PostgreSQL concurrent writers and a prune neither
 * duplicate a set nor wait on each other.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Migrator, sql } from 'kysely';
import { type AuditRecord, insertAuditRecords, pruneAudit, readDisclosures } from '../../src/store/audit.js';
import { openStore, type Store } from '../../src/store/database.js';
import { migrationProvider } from '../../src/store/migrations/index.js';
import { patientSetId, SET_LAST_USED_STEP_MS } from '../../src/store/patientSets.js';
import {
  createTestStore,
  createUnmigratedStore,
  forEachStore,
  type TestDatabase,
} from '../support/stores.js';

const T0 = Date.parse('2026-06-01T08:00:00Z');
const STEP = SET_LAST_USED_STEP_MS;
const page = Array.from({ length: 50 }, (_, i) => `pat_${String(i).padStart(2, '0')}`);

let serial = 0;
function record(at: number, patientIds?: readonly string[]): AuditRecord {
  serial++;
  return {
    at,
    request_id: `req_${String(serial).padStart(4, '0')}`,
    organization_id: 'org_a',
    key_id: 'key_a',
    method: 'GET',
    route: patientIds && patientIds.length > 1 ? 'listEncounters' : 'getEncounter',
    status: patientIds ? 200 : 403,
    duration_ms: 1,
    patient_ids: patientIds,
  };
}

async function count(store: Store, table: 'audit_log' | 'audit_patient_sets' | 'audit_set_patients') {
  const row = await store.db
    .selectFrom(table)
    .select(sql<number>`count(*)`.as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function report(store: Store, patientId: string, pageSize?: number) {
  const out: string[] = [];
  for await (const row of readDisclosures(store.db, { patientId }, pageSize)) out.push(row.request_id);
  return out;
}

forEachStore('audit patient sets', (kind) => {
  let store: Store & { database: TestDatabase };
  before(async () => {
    serial = 0;
    store = await createTestStore(kind);
  });
  after(() => store.close());

  test('happy: records naming the same patients, in any order or repeated, share one stored set', async () => {
    const shuffled = [...page].reverse();
    const first = [record(T0, page), record(T0 + 1, ['pat_07']), record(T0 + 2)];
    const second = [
      record(T0 + 3, [...shuffled, 'pat_03']),
      record(T0 + 2 * STEP, page),
      record(T0 + 5, ['pat_07']),
    ];
    await insertAuditRecords(store.db, first);
    await insertAuditRecords(store.db, second);

    assert.equal(await count(store, 'audit_log'), 6);
    assert.equal(await count(store, 'audit_patient_sets'), 2, 'the page and the single patient');
    assert.equal(await count(store, 'audit_set_patients'), 51, 'members stored once each');
    const sets = await store.db.selectFrom('audit_patient_sets').selectAll().orderBy('set_id').execute();
    const expected = [
      { set_id: patientSetId(page), members: page, last_used_at: T0 + 2 * STEP },
      { set_id: patientSetId(['pat_07']), members: ['pat_07'], last_used_at: T0 + 1 },
    ].sort((a, b) => (a.set_id < b.set_id ? -1 : 1));
    assert.deepEqual(
      sets.map((s) => ({ ...s, members: JSON.parse(s.members), last_used_at: Number(s.last_used_at) })),
      expected,
      'a set remembers its newest record, moved only when a step newer',
    );
    const named = await store.db
      .selectFrom('audit_log')
      .select(['request_id', 'patient_set'])
      .orderBy('request_id')
      .execute();
    assert.deepEqual(
      named.map((row) => row.patient_set),
      [
        patientSetId(page),
        patientSetId(['pat_07']),
        null,
        patientSetId(page),
        patientSetId(page),
        patientSetId(['pat_07']),
      ],
      'a refusal names no set',
    );
  });

  test('happy: the patient report reads every record that carried the patient, newest first, across its sets, in pages', async () => {
    const all = await report(store, 'pat_07');
    assert.deepEqual(all, ['req_0005', 'req_0006', 'req_0004', 'req_0002', 'req_0001']);
    assert.deepEqual(await report(store, 'pat_07', 2), all, 'pages of two give the same answer');
    assert.deepEqual(await report(store, 'pat_03'), ['req_0005', 'req_0004', 'req_0001']);
    assert.deepEqual(await report(store, 'pat_99'), []);
  });

  test('happy: prune deletes a set only with the last record naming it', async () => {
    // The single patient's set is named again later; the page's is not.
    await insertAuditRecords(store.db, [record(T0 + 10 * STEP, ['pat_07'])]);
    const deleted = await pruneAudit(store.db, T0 + 5 * STEP, 1);
    assert.deepEqual(deleted, { audit_log: 6, audit_patient_sets: 1, audit_set_patients: 50 });
    assert.equal(await count(store, 'audit_patient_sets'), 1);
    assert.equal(await count(store, 'audit_set_patients'), 1);
    assert.deepEqual(await report(store, 'pat_07'), ['req_0007']);
    assert.deepEqual(await report(store, 'pat_03'), []);
    // Named again after its prune, the page's set is stored again, whole.
    await insertAuditRecords(store.db, [record(T0 + 20 * STEP, page)]);
    assert.equal(await count(store, 'audit_set_patients'), 51);
    assert.deepEqual(await report(store, 'pat_03'), ['req_0008']);
  });
});

forEachStore('audit patient sets: migration 009 both ways', (kind) => {
  let store: Store & { database: TestDatabase };
  before(async () => {
    store = await createUnmigratedStore(kind);
  });
  after(() => store.close());

  test('happy: disclosures stored before the upgrade are reported the same after it, and restored by its down', async () => {
    const migrator = new Migrator({ db: store.db, provider: migrationProvider });
    const upTo008 = await migrator.migrateTo('008_organization_rate_limit');
    assert.equal(upTo008.error, undefined);
    const old = sql`INSERT INTO audit_log (at, request_id, organization_id, key_id, method, route, status, duration_ms)
      VALUES (1000, 'req_old_1', 'org_a', 'key_a', 'GET', 'listEncounters', 200, 1),
             (2000, 'req_old_2', 'org_a', 'key_a', 'GET', 'getEncounter', 200, 1),
             (3000, 'req_old_3', 'org_a', 'key_a', 'GET', 'getEncounter', 403, 1)`;
    await old.execute(store.db);
    await sql`INSERT INTO audit_disclosures (patient_id, at, request_id, organization_id, key_id, route)
      VALUES ('pat_x', 1000, 'req_old_1', 'org_a', 'key_a', 'listEncounters'),
             ('pat_y', 1000, 'req_old_1', 'org_a', 'key_a', 'listEncounters'),
             ('pat_x', 2000, 'req_old_2', 'org_a', 'key_a', 'getEncounter')`.execute(store.db);

    const latest = await migrator.migrateToLatest();
    assert.equal(latest.error, undefined);
    assert.deepEqual(await report(store, 'pat_x'), ['req_old_2', 'req_old_1']);
    assert.deepEqual(await report(store, 'pat_y'), ['req_old_1']);
    // Written after the upgrade, and reported beside the old ones.
    await insertAuditRecords(store.db, [{ ...record(4000, ['pat_x', 'pat_y']), request_id: 'req_new' }]);
    assert.deepEqual(await report(store, 'pat_y'), ['req_new', 'req_old_1']);

    const down = await migrator.migrateTo('008_organization_rate_limit');
    assert.equal(down.error, undefined);
    const restored = await sql<{ patient_id: string; request_id: string }>`
      SELECT patient_id, request_id FROM audit_disclosures ORDER BY request_id, patient_id`.execute(store.db);
    assert.deepEqual(restored.rows, [
      { patient_id: 'pat_x', request_id: 'req_new' },
      { patient_id: 'pat_y', request_id: 'req_new' },
      { patient_id: 'pat_x', request_id: 'req_old_1' },
      { patient_id: 'pat_y', request_id: 'req_old_1' },
      { patient_id: 'pat_x', request_id: 'req_old_2' },
    ]);
  });
});

forEachStore('audit patient sets: concurrent writers', (kind) => {
  let store: Store & { database: TestDatabase };
  let second: Store;
  before(async () => {
    store = await createTestStore(kind);
    // A second connection pool on the same database: another API process, as far as it can tell.
    second = openStore(store.database.config);
  });
  after(async () => {
    await second.close();
    await store.close();
  });

  test('happy: two writers disclosing the same new sets at once store each set and its members once', async () => {
    const rounds = 20;
    const setsPerRound = 30;
    for (let round = 0; round < rounds; round++) {
      const records = Array.from({ length: setsPerRound }, (_, i) =>
        record(T0 + round, [`pat_r${round}_${i}_a`, `pat_r${round}_${i}_b`]),
      );
      // Both writers name the same new sets, in opposite record orders: they would deadlock if
      // they locked the sets in the order of their records.
      await Promise.all([
        insertAuditRecords(store.db, records),
        insertAuditRecords(
          second.db,
          [...records].reverse().map((r) => ({ ...r, request_id: `${r.request_id}_2` })),
        ),
      ]);
    }
    assert.equal(await count(store, 'audit_log'), rounds * setsPerRound * 2);
    assert.equal(await count(store, 'audit_patient_sets'), rounds * setsPerRound);
    assert.equal(await count(store, 'audit_set_patients'), rounds * setsPerRound * 2);
    assert.equal((await report(store, 'pat_r7_3_a')).length, 2);
  });

  test('security: a prune passes over a set that a writer holds, and never waits for it', {
    skip: kind === 'sqlite' && 'SQLite serializes writers: no set is ever held during a prune',
  }, async () => {
    const held = ['pat_held'];
    const free = ['pat_free'];
    await insertAuditRecords(store.db, [record(T0 + 100 * STEP, held), record(T0 + 100 * STEP, free)]);
    await store.db.transaction().execute(async (tx) => {
      // What a writer's upsert does to a set it names: it holds the row until its commit.
      await tx
        .selectFrom('audit_patient_sets')
        .select('set_id')
        .where('set_id', '=', patientSetId(held))
        .forUpdate()
        .execute();
      const deleted = await pruneAudit(second.db, T0 + 200 * STEP);
      assert.equal(deleted.audit_patient_sets >= 1, true);
      const left = await second.db.selectFrom('audit_patient_sets').select('set_id').execute();
      assert.deepEqual(
        left.map((row) => row.set_id),
        [patientSetId(held)],
        'the held set stays, the free one is gone',
      );
    });
  });
});

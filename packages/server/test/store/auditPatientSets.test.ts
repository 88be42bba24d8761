/**
 * Disclosures stored by patient set (migrations 009 and 010), on both stores: a set is stored
 * once however many records name it, the patient report reads every record that carried the
 * patient and no other (whatever characters the IDs hold), retention deletes a set only with the
 * last record naming it, existing disclosures survive both migrations both ways, and on
 * PostgreSQL concurrent writers and a prune neither duplicate a set nor wait on each other.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CompiledQuery, Migrator, sql } from 'kysely';
import pg from 'pg';
import { openStore, type Store } from '../../src/database/connection.js';
import { migrationProvider } from '../../src/database/migrations/index.js';
import {
  insertAuditRecords,
  pruneAudit,
  readDisclosures,
  setsOfPatientQuery,
} from '../../src/store/audit.js';
import type { AuditRecord } from '../../src/store/auditRows.js';
import { patientSetId, SET_LAST_USED_STEP_MS } from '../../src/store/patientSets.js';
import {
  createTestStore,
  createUnmigratedStore,
  forEachStore,
  type TestDatabase,
} from '../support/stores.js';
import { waitFor } from '../support/waitFor.js';

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

async function count(store: Store, table: 'audit_log' | 'audit_patient_sets') {
  const row = await store.db
    .selectFrom(table)
    .select(sql<number>`count(*)`.as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** SQLite's per-patient index: rows of the FTS5 table, one per set (not per member). */
async function tokenRows(store: Store): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM audit_set_tokens`.execute(store.db);
  return Number(rows[0]!.n);
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
    if (kind === 'sqlite') assert.equal(await tokenRows(store), 2, 'indexed once per set, not per member');
    const sets = await store.db
      .selectFrom('audit_patient_sets')
      .select(['set_id', 'members', 'last_used_at'])
      .orderBy('set_id')
      .execute();
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
    assert.deepEqual(deleted, { audit_log: 6, audit_patient_sets: 1 });
    assert.equal(await count(store, 'audit_patient_sets'), 1);
    if (kind === 'sqlite') assert.equal(await tokenRows(store), 1, 'the page left the index with its set');
    assert.deepEqual(await report(store, 'pat_07'), ['req_0007']);
    assert.deepEqual(await report(store, 'pat_03'), []);
    // Named again after its prune, the page's set is stored again, whole.
    await insertAuditRecords(store.db, [record(T0 + 20 * STEP, page)]);
    assert.equal(await count(store, 'audit_patient_sets'), 2);
    for (const patient of page) {
      const alsoAlone = patient === 'pat_07' ? ['req_0007'] : [];
      assert.deepEqual(await report(store, patient), ['req_0008', ...alsoAlone]);
    }
  });

  test('happy: the report merges the sets newest first, equal times by request ID, whatever the read batch', async () => {
    const sets = [['pat_m'], ['pat_m', 'pat_n'], ['pat_m', 'pat_o', 'pat_p']];
    const written: AuditRecord[] = [];
    // Times from a small range, so that records of different sets share instants.
    let seed = 7;
    const random = () => {
      seed = (seed * 48271) % 2147483647;
      return seed / 2147483647;
    };
    for (let i = 0; i < 40; i++) written.push(record(T0 + Math.floor(random() * 12), sets[i % 3]!));
    await insertAuditRecords(store.db, written);
    const expected = [...written]
      .sort((a, b) => (a.at !== b.at ? b.at - a.at : a.request_id < b.request_id ? 1 : -1))
      .map((r) => r.request_id);
    for (const batch of [1, 2, 3, 7, 100]) {
      const got: string[] = [];
      for await (const row of readDisclosures(store.db, { patientId: 'pat_m', untilMs: T0 + 12 }, batch))
        got.push(row.request_id);
      assert.deepEqual(got, expected, `read batches of ${batch}`);
    }
    const withN = expected.filter((id) =>
      written.find((r) => r.request_id === id)!.patient_ids!.includes('pat_n'),
    );
    assert.deepEqual(await report(store, 'pat_n', 3), withN, 'one set of the three');
  });

  test('happy: a patient in many sets (as after the migration: one set per old request) is reported in order', async () => {
    const written: AuditRecord[] = [];
    for (let i = 0; i < 150; i++) {
      // 150 distinct sets holding pat_many, one to three records each, times colliding often.
      const patients = ['pat_many', `pat_other_${i}`];
      for (let j = 0; j <= i % 3; j++) written.push(record(T0 + 1_000 + ((i * 7 + j * 13) % 40), patients));
    }
    await insertAuditRecords(store.db, written);
    const expected = [...written]
      .sort((a, b) => (a.at !== b.at ? b.at - a.at : a.request_id < b.request_id ? 1 : -1))
      .map((r) => r.request_id);
    assert.deepEqual(await report(store, 'pat_many', 1), expected, 'read batches of 1');
    assert.deepEqual(await report(store, 'pat_many'), expected);
    const window: string[] = [];
    for await (const row of readDisclosures(store.db, {
      patientId: 'pat_many',
      sinceMs: T0 + 1_010,
      untilMs: T0 + 1_020,
    }))
      window.push(row.request_id);
    assert.deepEqual(
      window,
      written
        .filter((r) => r.at >= T0 + 1_010 && r.at < T0 + 1_020)
        .sort((a, b) => (a.at !== b.at ? b.at - a.at : a.request_id < b.request_id ? 1 : -1))
        .map((r) => r.request_id),
      'a time window',
    );
  });

  test('security: patient IDs that differ only in case, punctuation or escapes are reported apart', async () => {
    const ids = [
      'PAT_1',
      'pat_1',
      'pat-1',
      'pat 1',
      'patz5f1',
      'pat_1z',
      'Ωmega',
      '"quoted" OR pat',
      'AND',
      '',
    ];
    const records = ids.map((id, i) => ({ ...record(T0 + 40 * STEP + i, [id]), request_id: `req_odd_${i}` }));
    await insertAuditRecords(store.db, [
      ...records,
      { ...record(T0 + 50 * STEP, ids), request_id: 'req_odd_all' },
    ]);
    for (const [i, id] of ids.entries()) {
      assert.deepEqual(
        await report(store, id),
        ['req_odd_all', `req_odd_${i}`],
        `patient ${JSON.stringify(id)}`,
      );
    }
    assert.deepEqual(await report(store, 'pat'), [], 'no patient is found by a part of another ID');
  });

  test('happy: a patient’s sets are found through the per-patient index, not a scan of every set', async () => {
    const query = setsOfPatientQuery(store.db, 'pat_07').compile(store.db);
    const plan = await store.db.transaction().execute(async (tx) => {
      // A table this small would be scanned anyway; the question is whether the index can serve it.
      if (kind === 'postgres') await sql`SET LOCAL enable_seqscan = off`.execute(tx);
      const explain = kind === 'postgres' ? 'EXPLAIN' : 'EXPLAIN QUERY PLAN';
      const { rows } = await tx.executeQuery(
        CompiledQuery.raw(`${explain} ${query.sql}`, [...query.parameters]),
      );
      return JSON.stringify(rows);
    });
    if (kind === 'postgres') assert.match(plan, /audit_patient_sets_members/);
    else {
      assert.match(plan, /VIRTUAL TABLE INDEX \d+:M/, 'the FTS5 index answers the MATCH');
      assert.match(plan, /SEARCH s USING INTEGER PRIMARY KEY/, 'each set by its id');
    }
  });

  test('security: a set that a remaining record names is kept, whatever its last use says', async () => {
    await insertAuditRecords(store.db, [record(T0 + 30 * STEP, ['pat_late'])]);
    // A record written while a prune ran, stamped by a clock far behind: its set's last use was
    // not moved (within the step of the writer's view), yet the record is newer than the cut.
    const late = { ...record(T0 + 90 * STEP, ['pat_late']), patient_set: patientSetId(['pat_late']) };
    const { patient_ids: _, ...row } = late;
    await store.db.insertInto('audit_log').values(row).execute();
    await pruneAudit(store.db, T0 + 60 * STEP);
    assert.deepEqual(
      await report(store, 'pat_late'),
      [late.request_id],
      'its record still names the patient',
    );
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

forEachStore('audit patient sets: migration 010 both ways', (kind) => {
  let store: Store & { database: TestDatabase };
  before(async () => {
    store = await createUnmigratedStore(kind);
  });
  after(() => store.close());

  test('happy: sets indexed by a B-tree row per member are found the same through the inverted index, and the rows come back on its down', async () => {
    const migrator = new Migrator({ db: store.db, provider: migrationProvider });
    assert.equal((await migrator.migrateTo('009_audit_patient_sets')).error, undefined);
    const schema009 = await auditSchema(store);
    // More sets than the up migration indexes per statement, members overlapping across sets.
    const sets = Array.from({ length: 450 }, (_, i) => [`pat_${i % 37}`, `pat_${(i * 7) % 101}`, `PAT_${i}`]);
    const members = sets.map((set) => [...new Set(set)].sort());
    for (const [i, set] of members.entries()) {
      const id = patientSetId(set);
      await sql`INSERT INTO audit_patient_sets (set_id, members, last_used_at)
        VALUES (${id}, ${JSON.stringify(set)}, ${1000 + i}) ON CONFLICT DO NOTHING`.execute(store.db);
      for (const patient of set) {
        await sql`INSERT INTO audit_set_patients (patient_id, set_id) VALUES (${patient}, ${id})
          ON CONFLICT DO NOTHING`.execute(store.db);
      }
      await sql`INSERT INTO audit_log (at, request_id, organization_id, key_id, method, route, status, duration_ms, patient_set)
        VALUES (${1000 + i}, ${`req_m${String(i).padStart(3, '0')}`}, 'org_a', 'key_a', 'GET', 'listEncounters', 200, 1, ${id})`.execute(
        store.db,
      );
    }
    const before009 = await sql<{ patient_id: string; set_id: string }>`
      SELECT patient_id, set_id FROM audit_set_patients ORDER BY patient_id, set_id`.execute(store.db);

    assert.equal((await migrator.migrateToLatest()).error, undefined);
    const expected = (patient: string) =>
      members
        .map((set, i) => (set.includes(patient) ? `req_m${String(i).padStart(3, '0')}` : undefined))
        .filter((id) => id !== undefined)
        .reverse();
    for (const patient of ['pat_0', 'pat_36', 'pat_100', 'PAT_449', 'PAT_0']) {
      assert.deepEqual(await report(store, patient), expected(patient), patient);
    }

    assert.equal((await migrator.migrateTo('009_audit_patient_sets')).error, undefined);
    const after009 = await sql<{ patient_id: string; set_id: string }>`
      SELECT patient_id, set_id FROM audit_set_patients ORDER BY patient_id, set_id`.execute(store.db);
    assert.deepEqual(after009.rows, before009.rows);
    assert.deepEqual(await auditSchema(store), schema009, 'the down migration restores 009’s tables');
  });
});

/** The audit tables' columns and indexes, as the store describes them. */
async function auditSchema(store: Store & { database: TestDatabase }) {
  const tables = ['audit_patient_sets', 'audit_set_patients', 'audit_log'];
  if (store.dialect === 'sqlite') {
    const describe = async (table: string) => ({
      columns: (
        await sql<{ name: string; type: string; notnull: number; pk: number }>`
          SELECT name, type, "notnull", pk FROM pragma_table_info(${table})`.execute(store.db)
      ).rows.map((c) => ({ ...c, type: c.type.toLowerCase() })),
      indexes: (
        await sql<{ name: string; unique: number }>`SELECT name, "unique" FROM pragma_index_list(${table})
          WHERE origin = 'c' ORDER BY name`.execute(store.db)
      ).rows,
    });
    return Promise.all(tables.map(describe));
  }
  const { rows } = await sql<{ table_name: string; column_name: string; data_type: string }>`
    SELECT table_name, column_name, data_type FROM information_schema.columns
    WHERE table_name IN (${sql.join(tables)}) ORDER BY table_name, ordinal_position`.execute(store.db);
  const indexes = await sql<{ indexname: string }>`SELECT indexname FROM pg_indexes
    WHERE tablename IN (${sql.join(tables)}) ORDER BY indexname`.execute(store.db);
  return { columns: rows, indexes: indexes.rows };
}

forEachStore('audit patient sets: concurrent writers', (kind) => {
  let store: Store & { database: TestDatabase };
  let second: Store;
  before(async () => {
    store = await createTestStore(kind);
    // A second connection pool on the same database: another API process, as far as it can tell.
    // On PostgreSQL its statements give up after 5 s, so a prune that waited would fail, not hang.
    const config = store.database.config;
    second = openStore(config.dialect === 'postgres' ? { ...config, statementTimeoutMs: 5_000 } : config);
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
    if (kind === 'sqlite') assert.equal(await tokenRows(store), rounds * setsPerRound);
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

  test('security: a writer naming a set that a prune has locked waits, then stores the set afresh with its members', {
    skip: kind === 'sqlite' && 'SQLite serializes writers: a prune and a writer never overlap',
  }, async () => {
    const patients = ['pat_reborn_a', 'pat_reborn_b', 'pat_reborn_c'];
    const id = patientSetId(patients);
    const first = record(T0 + 300 * STEP, patients);
    await insertAuditRecords(store.db, [first]);
    const client = new pg.Client({ connectionString: store.database.url });
    await client.connect();
    try {
      // What a prune does: delete the old record, then, in a batch, lock its set (no record
      // names it now) and delete it.
      await client.query('DELETE FROM audit_log WHERE request_id = $1', [first.request_id]);
      await client.query('BEGIN');
      await client.query('SELECT set_id FROM audit_patient_sets WHERE set_id = $1 FOR UPDATE', [id]);
      await client.query('DELETE FROM audit_patient_sets WHERE set_id = $1', [id]);
      const again = record(T0 + 301 * STEP, patients);
      const writing = insertAuditRecords(second.db, [again]);
      // The writer is blocked on the prune's lock until it commits.
      await waitFor(async () => {
        const waiting = await store.db
          .selectFrom(sql<{ wait_event_type: string | null; query: string }>`pg_stat_activity`.as('p'))
          .select(sql<number>`count(*)`.as('n'))
          .where(
            sql<boolean>`datname = current_database() and wait_event_type = 'Lock' and query like '%audit_patient_sets%'`,
          )
          .executeTakeFirstOrThrow();
        return Number(waiting.n) > 0;
      }, 'the writer waiting on the lock');
      await client.query('COMMIT');
      await writing;
      const stored = await store.db
        .selectFrom('audit_patient_sets')
        .select('members')
        .where('set_id', '=', id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(JSON.parse(stored.members), patients, 'the set is whole again');
      for (const patient of patients) assert.deepEqual(await report(store, patient), [again.request_id]);
    } finally {
      await client.end();
    }
  });
});

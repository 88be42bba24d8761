/**
 * The audit guarantee with real `eds serve` processes on both stores (decisions.md, Audit): an
 * answer carrying data never reaches a client before its audit record is committed, a store
 * that cannot take records turns answers into 503 audit_unavailable and comes back by itself,
 * and `eds audit --patient` names exactly the answers that carried the patient.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import type { Store } from '../../src/database/connection.js';
import { insertAuditRecords, pruneAudit, readAudit } from '../../src/store/audit.js';
import { SET_LAST_USED_STEP_MS } from '../../src/store/patientSets.js';
import { cliEnv, edsJson, runEds } from '../support/cli.js';
import { FixtureBuilder } from '../support/fixtures.js';
import { startServeProcess } from '../support/processes.js';
import { createTestStore, forEachStore, type TestDatabase } from '../support/stores.js';

const T0 = Date.parse('2026-05-01T08:00:00Z');

async function get(url: string, path: string, token: string) {
  const r = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const text = await r.text();
  return { status: r.status, requestId: r.headers.get('x-request-id')!, text, headers: r.headers };
}

forEachStore('audit before the answer, real processes', (kind) => {
  let store: Store & { database: TestDatabase };
  let env: Record<string, string>;
  let fixtures: FixtureBuilder;
  let token: string;
  let tokenB: string;
  let org: string;
  let patientA: string;
  let patientB: string;
  let encounterA: string;
  let encounterB: string;
  let noteA: string;
  let otherOrgEncounter: string;

  before(async () => {
    store = await createTestStore(kind);
    fixtures = new FixtureBuilder(store.db);
    org = await fixtures.organization({ name: 'Clinic D' });
    patientA = await fixtures.patient(org);
    patientB = await fixtures.patient(org);
    encounterA = await fixtures.encounter(org, { patientId: patientA, createdAt: T0 });
    encounterB = await fixtures.encounter(org, { patientId: patientB, createdAt: T0 + 60_000 });
    noteA = await fixtures.document(org, encounterA);
    ({ token } = await fixtures.key(org));
    const orgB = await fixtures.organization({ name: 'Clinic E' });
    otherOrgEncounter = await fixtures.encounter(orgB, { patientId: await fixtures.patient(orgB) });
    ({ token: tokenB } = await fixtures.key(orgB));
    env = cliEnv(store.database);
  });
  after(() => store.close());

  async function auditedRequests(): Promise<Map<string, number>> {
    const byRequest = new Map<string, number>();
    for await (const row of readAudit(store.db, {})) byRequest.set(row.request_id, row.status);
    return byRequest;
  }

  test('security: after SIGKILL under load, every 200 the client saw has its audit record', async () => {
    const server = await startServeProcess(env);
    const paths = [
      `/external/v1/encounters/${encounterA}`,
      '/external/v1/encounters?limit=2',
      `/external/v1/encounters/${encounterA}/documents/${noteA}`,
    ];
    const served: string[] = [];
    let killed = false;
    let enough: () => void;
    const enoughServed = new Promise<void>((resolve) => {
      enough = resolve;
    });
    // 16 clients in a loop until the process is gone.
    const clients = Array.from({ length: 16 }, async (_, c) => {
      for (let i = c; !killed; i++) {
        try {
          const answer = await get(server.url, paths[i % paths.length]!, token);
          if (answer.status === 200) served.push(answer.requestId);
          if (served.length >= 600) enough();
        } catch {
          return;
        }
      }
    });
    await enoughServed;
    killed = true;
    await server.stop('SIGKILL');
    await Promise.all(clients);
    const audited = await auditedRequests();
    const missing = served.filter((id) => audited.get(id) !== 200);
    assert.ok(served.length >= 600);
    assert.deepEqual(missing, [], `${missing.length} of ${served.length} answers have no record`);
  });

  test('error: an audit store that cannot take records answers 503 audit_unavailable with no data, and recovers by itself', async () => {
    const server = await startServeProcess(env);
    try {
      assert.equal((await get(server.url, `/external/v1/encounters/${encounterA}`, token)).status, 200);
      await sql`ALTER TABLE audit_log RENAME TO audit_log_away`.execute(store.db);
      const refused = [
        await get(server.url, `/external/v1/encounters/${encounterA}`, token),
        await get(server.url, '/external/v1/encounters', token),
        await get(server.url, `/external/v1/encounters/${encounterA}/documents/${noteA}`, token),
      ];
      for (const answer of refused) {
        assert.equal(answer.status, 503);
        assert.match(answer.headers.get('content-type')!, /^application\/problem\+json/);
        const body = JSON.parse(answer.text) as Record<string, unknown>;
        assert.equal(body.reason_code, 'audit_unavailable');
        assert.equal(body.request_id, answer.requestId);
        for (const secret of [patientA, patientB, encounterB, ...fixtures.secrets]) {
          assert.equal(answer.text.includes(secret), false, 'no data in the refusal');
        }
      }
      await sql`ALTER TABLE audit_log_away RENAME TO audit_log`.execute(store.db);
      const back = await get(server.url, `/external/v1/encounters/${encounterA}`, token);
      assert.equal(back.status, 200, 'the next request after the store is back is served');
      assert.equal((await auditedRequests()).get(back.requestId), 200);
    } finally {
      await server.stop();
    }
  });

  test('happy: `eds audit --patient` names the list pages and details that carried the patient, newest first, and nothing else', async () => {
    const server = await startServeProcess(env);
    const only = (answer: Awaited<ReturnType<typeof get>>) => {
      assert.equal(answer.status, 200, answer.text);
      return answer.requestId;
    };
    let expected: string[];
    let notCarryingA: string[];
    try {
      const pageA = only(await get(server.url, '/external/v1/encounters?limit=1&sort_order=asc', token));
      const pageB = only(
        await get(server.url, '/external/v1/encounters?limit=1&offset=1&sort_order=asc', token),
      );
      const pageBoth = only(await get(server.url, '/external/v1/encounters', token));
      const detailA = only(await get(server.url, `/external/v1/encounters/${encounterA}`, token));
      const detailB = only(await get(server.url, `/external/v1/encounters/${encounterB}`, token));
      const noteOfA = only(
        await get(server.url, `/external/v1/encounters/${encounterA}/documents/${noteA}`, token),
      );
      const denied = await get(server.url, `/external/v1/encounters/${encounterA}`, tokenB);
      assert.equal(denied.status, 403);
      const crossOrg = await get(server.url, `/external/v1/encounters/${otherOrgEncounter}`, token);
      assert.equal(crossOrg.status, 403);
      expected = [pageA, pageBoth, detailA, noteOfA];
      notCarryingA = [pageB, detailB, denied.requestId, crossOrg.requestId];
    } finally {
      await server.stop();
    }
    const result = await runEds(['audit', '--patient', patientA], env);
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, string>);
    const reported = lines.map((line) => line.request_id);
    for (const id of notCarryingA)
      assert.equal(reported.includes(id), false, `${id} did not carry patient A`);
    // Earlier tests of this suite also disclosed patient A; these four are the newest.
    assert.deepEqual(
      lines
        .slice(0, 4)
        .map((line) => line.request_id)
        .sort(),
      [...expected].sort(),
      'exactly the answers that carried the patient',
    );
    const times = lines.map((line) => Date.parse(line.at!));
    assert.deepEqual(
      times,
      [...times].sort((a, b) => b - a),
      'newest first',
    );
    const byId = new Map(lines.map((line) => [line.request_id, line]));
    assert.deepEqual(Object.keys(byId.get(expected[0]!)!).sort(), [
      'at',
      'key_id',
      'organization_id',
      'request_id',
      'route',
    ]);
    assert.equal(byId.get(expected[0]!)!.route, 'listEncounters');
    assert.equal(byId.get(expected[0]!)!.organization_id, org);
    assert.equal(byId.get(expected[3]!)!.route, 'getDocument');
    const forB = await runEds(['audit', '--patient', patientB], env);
    const bIds = forB.stdout
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { request_id: string }).request_id);
    assert.equal(bIds.includes(expected[0]!), false, 'page A did not carry patient B');
    assert.equal(bIds.includes(expected[1]!), true, 'the full page carried patient B');
    assert.equal(bIds.includes(expected[2]!), false);
    const later = await runEds(['audit', '--patient', patientA, '--since', '2100-01-01T00:00:00Z'], env);
    assert.equal(later.stdout, '');
    const ownOrg = await runEds(['audit', '--patient', patientA, '--org', org], env);
    assert.equal(ownOrg.stdout, result.stdout, 'every disclosure of patient A was to its own organization');
    const otherOrg = await runEds(['audit', '--patient', patientA, '--org', 'org_not_this_one'], env);
    assert.equal(otherOrg.stdout, '');
  });

  test('happy: a list page that shows one patient twice is audited with each of its patients once', async () => {
    const clinic = await fixtures.organization({ name: 'Clinic F' });
    const twice = await fixtures.patient(clinic);
    const once = await fixtures.patient(clinic);
    await fixtures.encounter(clinic, { patientId: twice, createdAt: T0 });
    await fixtures.encounter(clinic, { patientId: once, createdAt: T0 + 60_000 });
    await fixtures.encounter(clinic, { patientId: twice, createdAt: T0 + 120_000 });
    const { token: clinicToken } = await fixtures.key(clinic);
    const server = await startServeProcess(env);
    let requestId: string;
    try {
      const page = await get(server.url, '/external/v1/encounters', clinicToken);
      assert.equal(page.status, 200, page.text);
      assert.equal((JSON.parse(page.text) as { items: unknown[] }).items.length, 3);
      requestId = page.requestId;
    } finally {
      await server.stop();
    }
    const stored = await store.db
      .selectFrom('audit_log as a')
      .innerJoin('audit_patient_sets as s', 's.set_id', 'a.patient_set')
      .select('s.members')
      .where('a.request_id', '=', requestId)
      .execute();
    assert.deepEqual(stored, [{ members: JSON.stringify([twice, once].sort()) }]);
    for (const patient of [twice, once]) {
      const found = await runEds(['audit', '--patient', patient], env);
      assert.deepEqual(
        found.stdout
          .trim()
          .split('\n')
          .map((line) => (JSON.parse(line) as { request_id: string }).request_id),
        [requestId],
      );
    }
  });

  test('happy: `eds audit prune --before` deletes older records and the patient sets only they named, in bounded batches; newer ones stay', async () => {
    // Every earlier answer is older than the cutoff, and their sets were last used before it by
    // more than the step a set's last use may lag.
    const cutoff = Date.now() + SET_LAST_USED_STEP_MS + 60_000;
    // A newer record naming patient A alone keeps that set (which older answers named too).
    await insertAuditRecords(store.db, [
      {
        at: cutoff + 60_000,
        request_id: 'req_future',
        route: 'getEncounter',
        organization_id: org,
        key_id: 'key_x',
        method: 'GET',
        status: 200,
        duration_ms: 1,
        patient_ids: [patientA],
      },
    ]);
    const setsBefore = await store.db
      .selectFrom('audit_patient_sets')
      .select(sql<number>`count(*)`.as('n'))
      .executeTakeFirstOrThrow();
    assert.ok(Number(setsBefore.n) >= 3, 'A alone, B alone, and the page of both');
    // Batches of 2: several statements, each bounded.
    const deleted = await pruneAudit(store.db, cutoff - 1, 2);
    assert.ok(deleted.audit_log > 2 && deleted.audit_patient_sets >= 2);
    // Nothing older is left for the command to find; its output names every table it prunes.
    const viaCli = await edsJson<{ deleted: Record<string, number> }>(
      ['audit', 'prune', '--before', new Date(cutoff).toISOString()],
      env,
    );
    assert.deepEqual(viaCli.deleted, { audit_log: 0, audit_patient_sets: 0 });
    const left = await store.db.selectFrom('audit_patient_sets').select('members').execute();
    assert.deepEqual(left, [{ members: JSON.stringify([patientA]) }]);
    const leftAudit = await store.db.selectFrom('audit_log').select('request_id').execute();
    assert.deepEqual(leftAudit, [{ request_id: 'req_future' }]);
    const report = await runEds(['audit', '--patient', patientA], env);
    assert.equal(JSON.parse(report.stdout).request_id, 'req_future');
    const forB = await runEds(['audit', '--patient', patientB], env);
    assert.equal(forB.stdout, '');
  });
});

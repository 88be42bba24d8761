import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Store } from '../../src/database/connection.js';
import { insertAuditRecords } from '../../src/store/audit.js';
import { cliEnv, runEds } from '../support/cli.js';
import { createTestStore, type TestDatabase } from '../support/stores.js';

let store: Store & { database: TestDatabase };
let env: Record<string, string>;
const at = (iso: string) => Date.parse(iso);

before(async () => {
  store = await createTestStore('sqlite');
  env = cliEnv(store.database);
  const row = {
    method: 'GET',
    route: '/external/v1/encounters',
    status: 200,
    duration_ms: 1.5,
    key_id: 'key_1',
  };
  await insertAuditRecords(store.db, [
    { ...row, at: at('2026-05-01T10:00:00Z'), request_id: 'req_2', organization_id: 'org_a' },
    { ...row, at: at('2026-05-01T09:00:00Z'), request_id: 'req_1', organization_id: 'org_a' },
    {
      ...row,
      at: at('2026-05-01T11:00:00Z'),
      request_id: 'req_3',
      organization_id: 'org_b',
      status: 403,
      reason_code: 'route_not_allowed',
    },
    { ...row, at: at('2026-05-02T09:00:00Z'), request_id: 'req_4', organization_id: 'org_a' },
  ]);
});
after(() => store.close());

const lines = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

test('prints the audit log as NDJSON, oldest first, with times in ISO form', async () => {
  const result = await runEds(['audit'], env);
  assert.equal(result.code, 0, result.stderr);
  const records = lines(result.stdout);
  assert.deepEqual(
    records.map((r) => r.request_id),
    ['req_1', 'req_2', 'req_3', 'req_4'],
  );
  assert.deepEqual(records[2], {
    at: '2026-05-01T11:00:00.000Z',
    request_id: 'req_3',
    organization_id: 'org_b',
    key_id: 'key_1',
    method: 'GET',
    route: '/external/v1/encounters',
    encounter_id: null,
    document_id: null,
    status: 403,
    reason_code: 'route_not_allowed',
    duration_ms: 1.5,
    request_count: 1,
  });
});

test('filters by organization and by a [since, until) window', async () => {
  const result = await runEds(
    ['audit', '--org', 'org_a', '--since', '2026-05-01T10:00:00Z', '--until', '2026-05-02T11:00:00+02:00'],
    env,
  );
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(
    lines(result.stdout).map((r) => r.request_id),
    ['req_2'],
  );
  const bad = await runEds(['audit', '--since', 'yesterday'], env);
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /RFC 3339/);
});

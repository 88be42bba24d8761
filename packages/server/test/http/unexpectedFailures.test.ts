/**
 * The store failing after the caller's key was verified: 503 service_unavailable with
 * Retry-After, the cause in the log, the refusal audited, and the service back by itself when
 * the store is. digest_key_unavailable stays for a key that could not be verified.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import type { ApiResponse } from '../support/apiClient.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { useServerWithWorld } from '../support/serverWithWorld.js';
import { forEachStore } from '../support/stores.js';
import { waitFor } from '../support/waitFor.js';
import { buildWorld, pathFor } from '../support/world.js';

function assertServiceUnavailable(r: ApiResponse): void {
  assert.equal(r.status, 503, r.text);
  assert.equal(r.body.reason_code, 'service_unavailable');
  assert.equal(r.headers.get('retry-after'), '1');
  assert.equal(r.body.message, r.body.detail);
  assert.equal(r.body.field, null);
}

interface LogLine {
  level: number;
  msg: string;
  req_id?: string;
  err?: { name?: string; code?: string; message?: string };
}

/** The log line of the failure, for the request with this id. */
function failureLine(server: TestServer, requestId: string): LogLine | undefined {
  return server.logs
    .map((line) => JSON.parse(line) as LogLine)
    .find((line) => line.req_id === requestId && String(line.msg).startsWith('request failed'));
}

forEachStore('the store failing after the key was verified', (kind) => {
  const given = useServerWithWorld(kind);

  test('error: the read model gone → 503 service_unavailable with Retry-After, the cause logged, then 200 again', async () => {
    const { db } = given.server.services.store;
    assert.equal(
      (await given.server.api.get(pathFor('getEncounter', given.world), { token: given.world.token })).status,
      200,
    );
    await sql`ALTER TABLE encounter_reads RENAME TO encounter_reads_away`.execute(db);
    let list: ApiResponse;
    try {
      const one = await given.server.api.get(pathFor('getEncounter', given.world), {
        token: given.world.token,
      });
      list = await given.server.api.get('/external/v1/encounters', { token: given.world.token });
      assertServiceUnavailable(one);
      assertServiceUnavailable(list);
      // The key was verified: the answer carries its rate-limit fields, and nothing about keys.
      assert.ok(one.headers.get('ratelimit'), 'a keyed answer');
      assert.equal(one.headers.get('www-authenticate'), null);
    } finally {
      await sql`ALTER TABLE encounter_reads_away RENAME TO encounter_reads`.execute(db);
    }
    const line = failureLine(given.server, list.body.request_id);
    assert.ok(line, 'the failure is logged with the request id');
    assert.equal(line.level, 50);
    assert.match(line.err?.message ?? '', /encounter_reads/, 'the cause is in the log');
    assert.equal(JSON.stringify(line).includes(given.world.token), false);
    assert.equal(
      (await given.server.api.get(pathFor('getEncounter', given.world), { token: given.world.token })).status,
      200,
    );
  });

  test('audit: the refused request is recorded with its reason code before it is answered', async () => {
    const { db } = given.server.services.store;
    await sql`ALTER TABLE encounter_reads RENAME TO encounter_reads_away`.execute(db);
    let r: ApiResponse;
    try {
      r = await given.server.api.get(pathFor('getTranscript', given.world), { token: given.world.token });
    } finally {
      await sql`ALTER TABLE encounter_reads_away RENAME TO encounter_reads`.execute(db);
    }
    assertServiceUnavailable(r);
    const rows = await db
      .selectFrom('audit_log')
      .select(['status', 'reason_code', 'route'])
      .where('request_id', '=', r.body.request_id)
      .execute();
    assert.deepEqual(rows, [{ status: 503, reason_code: 'service_unavailable', route: 'getTranscript' }]);
  });

  test('error: the key store failing before the key is verified is still 503 digest_key_unavailable', async () => {
    const { db } = given.server.services.store;
    const fresh = (await given.server.fixtures.key(given.world.orgA)).token;
    await sql`ALTER TABLE api_keys RENAME TO api_keys_away`.execute(db);
    try {
      const r = await given.server.api.get(pathFor('getEncounter', given.world), { token: fresh });
      assert.equal(r.status, 503, r.text);
      assert.equal(r.body.reason_code, 'digest_key_unavailable');
      assert.equal(r.body.field, null);
    } finally {
      await sql`ALTER TABLE api_keys_away RENAME TO api_keys`.execute(db);
    }
    assert.equal(
      (await given.server.api.get(pathFor('getEncounter', given.world), { token: fresh })).status,
      200,
    );
  });
});

const PG_URL = process.env.TEST_DATABASE_URL;

test('error: PostgreSQL refusing the request pool after the key was verified → 503 service_unavailable', {
  skip: PG_URL ? false : 'TEST_DATABASE_URL is not set: PostgreSQL run skipped',
}, async () => {
  const server = await startTestServer('postgres');
  const world = await buildWorld(server.fixtures, server.putObject);
  const name = new URL(server.database.url).pathname.slice(1);
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    // Verified and cached; the audit writer keeps its own connection open.
    assert.equal((await server.api.get(pathFor('getEncounter', world), { token: world.token })).status, 200);
    await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
    await admin.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'eds'`,
      [name],
    );
    await waitFor(async () => {
      const left = await admin.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'eds'`,
        [name],
      );
      return left.rows[0].n === 0;
    });
    const r = await server.api.get(pathFor('getEncounter', world), { token: world.token });
    assertServiceUnavailable(r);
  } finally {
    await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`).catch(() => {});
    await admin.end();
    await server.close();
  }
});

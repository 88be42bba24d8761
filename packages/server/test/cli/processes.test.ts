/**
 * Real processes, as an operator runs them: several `eds serve` on one database with keys
 * changed through `eds`, graceful shutdown, and metrics. (A crash under load, and the audit
 * records it must not lose, is in durableAudit.test.ts.)
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, test } from 'node:test';
import { openStore } from '../../src/database/connection.js';
import { readAudit } from '../../src/store/audit.js';
import { cliEnv, edsJson, runEds } from '../support/cli.js';
import { startServeProcess } from '../support/processes.js';
import { createTestDatabase, forEachStore, type TestDatabase } from '../support/stores.js';

const ALL_SCOPES = 'encounters:read,patients:read,documents:read,recordings:read';

async function setUp(database: TestDatabase, env: Record<string, string>) {
  await edsJson(['migrate'], env);
  const org = await edsJson<{ organization_id: string }>(
    ['org', 'create', '--name', 'Clinic P', '--allowlisted', '--routes', 'encounters,documents'],
    env,
  );
  const key = await edsJson<{ key_id: string; token: string }>(
    ['key', 'create', '--org', org.organization_id, '--scopes', ALL_SCOPES],
    env,
  );
  return { org: org.organization_id, ...key, database };
}

async function statusOf(url: string, token: string): Promise<string> {
  const r = await fetch(`${url}/external/v1/encounters?limit=1`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const body = (await r.json()) as { reason_code?: string };
  return `${r.status}${body.reason_code ? ` ${body.reason_code}` : ''}`;
}

/** Request id → status of every audit row, and how many 429s the folded rows count. */
async function auditCount(database: TestDatabase): Promise<Map<string, number> & { rateLimited: number }> {
  const store = openStore(database.config);
  const byRequest = Object.assign(new Map<string, number>(), { rateLimited: 0 });
  try {
    for await (const row of readAudit(store.db, {})) {
      byRequest.set(row.request_id, row.status);
      if (row.reason_code === 'rate_limited') byRequest.rateLimited += row.request_count;
    }
  } finally {
    await store.close();
  }
  return byRequest;
}

forEachStore('several API processes', (kind) => {
  let database: TestDatabase;
  let env: Record<string, string>;
  before(async () => {
    database = await createTestDatabase(kind);
    env = cliEnv(database);
  });
  after(() => database.drop());

  test('security: a key revoked with `eds key revoke` is refused by two running API processes within 1 s', async () => {
    const { key_id, token } = await setUp(database, env);
    const servers = await Promise.all([startServeProcess(env), startServeProcess(env)]);
    try {
      for (const s of servers) assert.equal(await statusOf(s.url, token), '200');
      const revokedAt = Date.now();
      await edsJson(['key', 'revoke', key_id], env);
      const cliDone = Date.now();
      const latencies = await Promise.all(
        servers.map(async (s) => {
          for (;;) {
            const status = await statusOf(s.url, token);
            if (status === '401 revoked_key') return Date.now() - cliDone;
            assert.equal(status, '200');
            if (Date.now() - revokedAt > 5000) throw new Error('still accepted after 5 s');
            await new Promise((r) => setTimeout(r, 20));
          }
        }),
      );
      for (const ms of latencies) assert.ok(ms < 1000, `refused after ${ms} ms`);
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
  });
});

let database: TestDatabase;
let env: Record<string, string>;
let token: string;
before(async () => {
  database = await createTestDatabase('sqlite');
  env = cliEnv(database, { EDS_AUDIT_FLUSH_MS: '100' });
  ({ token } = await setUp(database, env));
});
after(() => database.drop());

/** Sends `count` requests at once; `completed` fills as answers arrive, `done` when all have. */
function burst(url: string, count: number) {
  const completed: { id: string; at: number; status: number }[] = [];
  const failures: string[] = [];
  const done = Promise.all(
    Array.from({ length: count }, async () => {
      try {
        const r = await fetch(`${url}/external/v1/encounters?limit=5`, {
          headers: { authorization: `Bearer ${token}` },
        });
        await r.arrayBuffer();
        completed.push({ id: r.headers.get('x-request-id')!, at: Date.now(), status: r.status });
      } catch (error) {
        failures.push(String((error as Error).cause ?? error));
      }
    }),
  );
  return { completed, failures, done };
}

test('happy: SIGTERM finishes in-flight requests, flushes the audit queue and exits 0', async () => {
  // A small burst, so the stop also finds 429s being held (up to the default second).
  const server = await startServeProcess({
    ...env,
    EDS_RATE_LIMIT_PER_KEY: '10',
    EDS_RATE_LIMIT_BURST: '20',
  });
  const load = burst(server.url, 300);
  // Stop once the burst's 20 and a few refusals are back: the rest are in flight, most of them
  // refusals held in line for the coming tokens.
  while (load.completed.length < 25) await new Promise((r) => setTimeout(r, 10));
  const code = await server.stop('SIGTERM');
  await load.done;
  const { completed, failures } = load;
  assert.equal(code, 0);
  assert.ok(completed.length > 0);
  // Requests the server had accepted completed; the rest were refused, never cut off mid-answer.
  for (const f of failures) assert.match(f, /ECONNREFUSED|ECONNRESET|other side closed|SocketError/);
  const audited = await auditCount(database);
  // Past the key's burst answers are 429s, folded into counted rows that keep only their
  // window's first request id.
  const refused = completed.filter((c) => c.status === 429);
  const missing = completed.filter((c) => c.status !== 429 && !audited.has(c.id));
  assert.deepEqual(missing, [], 'every completed request is in the audit log after a graceful stop');
  assert.ok(refused.length >= 5, 'refusals were being held when the stop came');
  assert.equal(audited.rateLimited, refused.length, 'every refusal is counted in the folded rows');
});

test('error: a port already taken ends `eds serve` with a non-zero exit naming the variables, not a process that stays', {
  timeout: 120_000,
}, async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const { port } = taken.address() as { port: number };
  try {
    // The audit writer thread once held the process open here: this
    // waited for the test's timeout instead of an exit.
    const result = await runEds(['serve'], { ...env, EDS_PORT: String(port) });
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /cannot listen: .*EADDRINUSE.*\(see EDS_HOST, EDS_PORT, EDS_MEDIA_PORT\)/);
  } finally {
    await new Promise((resolve) => taken.close(resolve));
  }
});

test('happy: the admin port serves Prometheus metrics by route, status and reason code', async () => {
  const server = await startServeProcess({ ...env, EDS_ADMIN_PORT: '0' });
  try {
    await statusOf(server.url, token);
    await fetch(`${server.url}/external/v1/encounters`);
    const metrics = await (await fetch(`${server.adminUrl}/metrics`)).text();
    assert.match(
      metrics,
      /eds_http_request_duration_seconds_bucket\{[^}]*route="listEncounters"[^}]*status="200"/,
    );
    assert.match(
      metrics,
      /eds_http_responses_total\{route="listEncounters",status="401",reason_code="missing_bearer"\} 1/,
    );
    assert.match(metrics, /eds_key_cache_lookups_total\{outcome="miss"\} \d/);
    assert.match(metrics, /eds_audit_queue_depth \d/);
    assert.match(metrics, /eds_webhook_attempts_total/);
    assert.equal((await fetch(`${server.url}/metrics`)).status, 404, 'metrics are not on the API port');
  } finally {
    await server.stop();
  }
});

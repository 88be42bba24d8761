/**
 * Faults: the store or the media storage failing mid-run gives the contract's 503 codes, never a
 * 500, and the service recovers by itself when the dependency returns.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { freePort } from '../support/processes.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createTestStore } from '../support/stores.js';
import { waitFor } from '../support/waitFor.js';
import { buildWorld, pathFor, type World } from '../support/world.js';

const PG_URL = process.env.TEST_DATABASE_URL;

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

test('PostgreSQL goes away and comes back', {
  skip: PG_URL ? false : 'TEST_DATABASE_URL is not set: PostgreSQL run skipped',
}, async (t) => {
  const server = await startTestServer('postgres', { env: { EDS_KEY_CACHE_TTL_MS: '0' } });
  const world = await buildWorld(server.fixtures, server.putObject);
  const name = new URL(server.database.url).pathname.slice(1);
  const statuses = async (n: number) => {
    const seen: string[] = [];
    for (let i = 0; i < n; i++) {
      const r = await server.api.get(pathFor('getEncounter', world), { token: world.token });
      seen.push(`${r.status}${r.body.reason_code ? ` ${r.body.reason_code}` : ''}`);
    }
    return seen;
  };
  try {
    assert.deepEqual(await statuses(2), ['200', '200']);

    await t.test(
      'error: connections killed and new ones refused → 503 digest_key_unavailable, never 500',
      async () => {
        await admin(async (c) => {
          await c.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
          await c.query(
            'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
            [name],
          );
          // pg_terminate_backend only signals; wait until the backends are gone, or a request
          // could still be served by one that has not exited yet (seen under a loaded CI run).
          for (let i = 0; i < 100; i++) {
            const left = await c.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [
              name,
            ]);
            if (left.rows[0].n === 0) break;
            await new Promise((r) => setTimeout(r, 20));
          }
        });
        const during = await statuses(5);
        for (const s of during) assert.equal(s, '503 digest_key_unavailable');
      },
    );

    await t.test(
      'happy: when connections are allowed again, requests succeed without a restart',
      async () => {
        await admin((c) => c.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`));
        const started = Date.now();
        for (;;) {
          const [s] = await statuses(1);
          if (s === '200') break;
          assert.equal(s, '503 digest_key_unavailable');
          if (Date.now() - started > 10_000) throw new Error('did not recover within 10 s');
          await new Promise((r) => setTimeout(r, 100));
        }
      },
    );
  } finally {
    await admin((c) => c.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`)).catch(() => {});
    await server.close();
  }
});

test('error: a connection lost while a transaction holds it fails that transaction, not the process', {
  skip: PG_URL ? false : 'TEST_DATABASE_URL is not set: PostgreSQL run skipped',
}, async () => {
  const store = await createTestStore('postgres');
  try {
    const transaction = store.db.transaction().execute(async (tx) => {
      const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(tx);
      // The backend goes away while this transaction holds its client, idle between statements.
      await admin((c) => c.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]));
      // pg_terminate_backend only signals: wait until the backend is gone.
      await waitFor(
        () =>
          admin(async (c) => {
            const left = await c.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [rows[0]!.pid]);
            return left.rowCount === 0;
          }),
        'the backend to exit',
      );
      await sql`SELECT 1`.execute(tx);
    });
    await assert.rejects(transaction);
    const { rows } = await sql<{ one: number }>`SELECT 1 AS one`.execute(store.db);
    assert.equal(rows[0]!.one, 1, 'the pool serves the next query on a new connection');
  } finally {
    await store.close(); // also drops the test database
  }
});

let server: TestServer;
let world: World;
before(async () => {
  const closedPort = await freePort();
  server = await startTestServer('sqlite', {
    env: {
      EDS_STORAGE_DRIVER: 's3',
      EDS_S3_BUCKET: 'recordings',
      EDS_S3_ENDPOINT: `http://127.0.0.1:${closedPort}`,
      EDS_S3_FORCE_PATH_STYLE: 'true',
      EDS_S3_ACCESS_KEY_ID: 'test',
      EDS_S3_SECRET_ACCESS_KEY: 'test-secret',
      EDS_STORAGE_TIMEOUT_MS: '500',
    },
  });
  world = await buildWorld(server.fixtures);
});
after(() => server.close());

test('error: media storage refusing connections → 503 audio_storage_unavailable within the storage timeout', async () => {
  const started = Date.now();
  const r = await server.api.get(pathFor('getAudio', world), { token: world.token });
  assert.equal(r.status, 503);
  assert.equal(r.body.reason_code, 'audio_storage_unavailable');
  assert.ok(Date.now() - started < 3000);
  // Routes that do not touch storage are unaffected.
  assert.equal((await server.api.get(pathFor('getTranscript', world), { token: world.token })).status, 200);
  // A document without a recording is decided before storage is asked.
  const bare = await server.api.get(pathFor('getAudio', world, { document: world.bare }), {
    token: world.token,
  });
  assert.equal(bare.body.reason_code, 'audio_not_available_for_document');
});

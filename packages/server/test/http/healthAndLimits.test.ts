/** Health endpoints for orchestrators, and the server's own limits against slow or huge requests. */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
before(async () => {
  server = await startTestServer('sqlite', { env: { EDS_REQUEST_TIMEOUT_MS: '500' } });
});
after(() => server.close());

test('happy: /healthz and /readyz answer without a key and without data', async () => {
  const health = await fetch(`${server.url}/healthz`);
  assert.equal(health.status, 200);
  assert.deepEqual(await health.json(), { status: 'ok' });
  const ready = await fetch(`${server.url}/readyz`);
  assert.equal(ready.status, 200);
  assert.deepEqual(await ready.json(), {
    status: 'ready',
    checks: { store: true, digest_secret: true, migrations: true },
  });
});

test('error: /readyz is 503 when the store cannot be reached', async () => {
  const other = await startTestServer('sqlite');
  await other.services.store.db.destroy();
  try {
    const ready = await fetch(`${other.url}/readyz`);
    assert.equal(ready.status, 503);
    const body = (await ready.json()) as { checks: Record<string, boolean> };
    assert.equal(body.checks.store, false);
    assert.equal(body.checks.digest_secret, true);
  } finally {
    await other.close().catch(() => {});
  }
});

test('security: a client that never finishes its headers is answered 408 problem+json and cut off', async () => {
  const { port } = new URL(server.url);
  const started = Date.now();
  const answer = await new Promise<string>((resolve, reject) => {
    let data = '';
    const socket = connect(Number(port), '127.0.0.1', () =>
      socket.write('GET /external/v1/encounters HTTP/1.1\r\nHost: x\r\n'),
    );
    socket.on('data', (c) => (data += c.toString('latin1')));
    socket.on('close', () => resolve(data));
    socket.on('error', reject);
    socket.setTimeout(10_000, () => {
      socket.destroy();
      reject(new Error('the server held the connection'));
    });
  });
  assert.ok(Date.now() - started < 5000);
  assert.match(answer, /^HTTP\/1\.1 408 /);
  assert.match(answer, /application\/problem\+json/);
});

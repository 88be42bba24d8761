/** Responses outside the five routes' own logic: unknown paths, bad URLs, transport errors, junk. */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { test } from 'node:test';
import { startTestServer } from '../support/server.js';
import { useServerWithWorld } from '../support/serverWithWorld.js';

const given = useServerWithWorld('sqlite');

function rawRequest(raw: string): Promise<string> {
  const { port } = new URL(given.server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(raw));
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString('latin1')));
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy(new Error('timeout')));
  });
}

test('error: unknown paths → 404 route_not_found problem+json with the API headers', async () => {
  for (const path of [
    '/',
    '/external/v1',
    '/external/v1/encounters/',
    '/external/v2/encounters',
    '/external/v1/patients',
    '/external/v1/encounters/a/b',
  ]) {
    const r = await given.server.api.get(path, { token: given.world.token });
    assert.equal(r.status, 404, path);
    assert.equal(r.body.reason_code, 'route_not_found');
    assert.equal(r.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    assert.equal(r.headers.get('cache-control'), 'no-store');
    assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
  }
});

test('error: an ID with undecodable percent-encoding is an ID that matches nothing (after auth)', async () => {
  for (const id of ['%zz', '%C0%AF', 'abc%', '%E2%82']) {
    const r = await given.server.api.get(`/external/v1/encounters/${id}`, { token: given.world.token });
    assert.equal(r.status, 404, `${id}: ${r.text}`);
    assert.equal(r.body.reason_code, 'encounter_not_found');
    assert.equal(
      (await given.server.api.get(`/external/v1/encounters/${id}`)).body.reason_code,
      'missing_bearer',
    );
  }
});

test('error: oversized headers → 431 problem+json written by the server itself', async () => {
  const raw = await rawRequest(
    `GET /external/v1/encounters HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(40_000)}\r\n\r\n`,
  );
  assert.match(raw, /^HTTP\/1\.1 431 /);
  assert.match(raw, /content-type: application\/problem\+json/i);
  const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
  assert.equal(body.status, 431);
  assert.equal(body.reason_code, 'route_not_found');
  assert.equal(body.message, body.detail);
  assert.equal(body.field, null);
});

test('error: a malformed request line → 400 problem+json', async () => {
  const raw = await rawRequest('GARBAGE\r\n\r\n');
  assert.match(raw, /^HTTP\/1\.1 400 /);
  assert.match(raw, /"reason_code":"route_not_found"/);
});

test('security: random junk in paths, queries and headers never yields a 5xx or a non-problem error', async () => {
  const pieces = [
    '%00',
    '%ff',
    '..',
    '%2e%2e',
    "'",
    '"',
    '<script>',
    '\u{1F600}',
    'ｅｎｃ',
    '%C0%AF',
    ';',
    '=',
    '&',
    '#',
    '?',
    '%',
    '+',
    'a'.repeat(300),
  ];
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  const pick = () => pieces[next() % pieces.length]!;
  for (let i = 0; i < 150; i++) {
    const path = `/external/v1/encounters/${encodeURI(pick())}${next() % 2 ? `/documents/${encodeURI(pick())}` : ''}?${encodeURI(pick())}=${encodeURI(pick())}`;
    const status = await new Promise<{ status: number; type: string }>((resolve, reject) => {
      const req = httpRequest(
        `${given.server.url}${path}`,
        {
          headers: {
            authorization:
              next() % 2 ? `Bearer ${given.world.token}` : `Bearer ${encodeURIComponent(pick())}`,
            'x-junk': encodeURI(pick()),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']) }),
          );
        },
      );
      req.on('error', reject);
      req.end();
    });
    assert.ok(status.status < 500, `${path} → ${status.status}`);
    if (status.status >= 400) assert.match(status.type, /application\/problem\+json/, path);
  }
});

test('error: a key that cannot be verified (digest secret or key store failing) → 503 digest_key_unavailable, never 500', async () => {
  const broken = await startTestServer('sqlite', {
    database: given.server.database,
    services: {
      digestKey: {
        current() {
          throw new Error('key service down');
        },
      },
    },
  });
  try {
    const r = await broken.api.get('/external/v1/encounters', { token: given.world.token });
    assert.equal(r.status, 503);
    assert.equal(r.body.reason_code, 'digest_key_unavailable');
  } finally {
    await broken.close();
  }
  const isolated = await startTestServer('sqlite');
  const org = await isolated.fixtures.organization();
  const { token } = await isolated.fixtures.key(org);
  await isolated.services.store.db.destroy();
  try {
    const r = await isolated.api.get('/external/v1/encounters', { token });
    assert.equal(r.status, 503, r.text);
    assert.equal(r.body.reason_code, 'digest_key_unavailable');
  } finally {
    await isolated.close().catch(() => {});
  }
});

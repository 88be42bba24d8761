/**
 * Fuzzing over raw sockets (so requests can carry bytes an HTTP client would refuse): random and
 * adversarial paths, query strings and headers on every route and on the media host. Never a
 * 5xx, never a hang; every error is problem+json with one of the service's reason codes.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { test } from 'node:test';
import fc from 'fast-check';
import { REASON_CODES } from '../../src/contract/reasons.js';
import { ROUTE_LIST } from '../../src/contract/routes.js';
import { useServerWithWorld } from '../support/serverWithWorld.js';
import { pathFor } from '../support/world.js';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

function send(url: string, request: Buffer): Promise<RawResponse> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    // write, not end: a client that half-closes before the answer is not a client Node serves.
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(request));
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', (e) => ((e as NodeJS.ErrnoException).code === 'ECONNRESET' ? finish() : reject(e)));
    socket.on('close', finish);
    socket.setTimeout(5000, () => reject(new Error('no answer within 5 s')));
    let done = false;
    function finish() {
      if (done) return;
      done = true;
      const raw = Buffer.concat(chunks).toString('latin1');
      const head = raw.slice(0, raw.indexOf('\r\n\r\n'));
      const [statusLine, ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      resolve({ status: Number(statusLine?.split(' ')[1] ?? 0), headers, body: raw.slice(head.length + 4) });
    }
  });
}

const ADVERSARIAL = [
  '%00',
  '%ff',
  '%C0%AF',
  '%zz',
  '..',
  '%2e%2e%2f',
  '....//',
  "'",
  "' OR 1=1 --",
  '"; DROP TABLE encounters; --',
  '<script>',
  'ｅｎｃ＿',
  'е',
  '\u202e',
  '%E2%80%8B',
  '${jndi:ldap://x}',
  '*',
  '?',
  '&',
  '=',
  ';',
  '%',
  '+',
  'a'.repeat(2000),
  '/'.repeat(20),
  '\\',
  '~',
  'enc_',
  'null',
  'undefined',
  '__proto__',
  'constructor',
];
const segment = fc.oneof(
  fc.constantFrom(...ADVERSARIAL),
  fc.string({ maxLength: 30 }).map((s) => encodeURIComponent(s)),
  fc
    .uint8Array({ maxLength: 12 })
    .map((bytes) => [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')),
);
const rawBytes = fc
  .uint8Array({ minLength: 1, maxLength: 40 })
  .map((b) => Buffer.from(b.map((x) => (x === 10 || x === 13 ? 32 : x))));

const given = useServerWithWorld('sqlite');

function assertProblemOrSuccess(r: RawResponse, what: string): void {
  assert.ok(r.status >= 200 && r.status < 500, `${what} → ${r.status}`);
  if (r.status >= 400) {
    assert.match(
      r.headers['content-type'] ?? '',
      /^application\/problem\+json/,
      `${what} → ${r.status} ${r.headers['content-type']}`,
    );
    const body = JSON.parse(r.body);
    assert.ok(
      (REASON_CODES as string[]).includes(body.reason_code),
      `${what} → unknown reason ${body.reason_code}`,
    );
    assert.equal(body.status, r.status);
  }
}

test('security: adversarial paths and queries on every route answer as the contract says, never 5xx', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...ROUTE_LIST),
      segment,
      segment,
      fc.array(fc.tuple(segment, segment), { maxLength: 4 }),
      fc.constantFrom('valid', 'none', 'junk'),
      async (route, a, b, query, auth) => {
        const template = pathFor(route, given.world);
        const path = template.replace(given.world.encounter, a).replace(/documents\/[^/]+/, `documents/${b}`);
        const qs = query.map(([k, v]) => `${k}=${v}`).join('&');
        const target = qs ? `${path}?${qs}` : path;
        const authorization =
          auth === 'valid' ? `Bearer ${given.world.token}` : auth === 'junk' ? `Bearer ${a}` : undefined;
        const request = Buffer.from(
          `GET ${target} HTTP/1.1\r\nHost: x\r\n${authorization ? `Authorization: ${authorization}\r\n` : ''}Connection: close\r\n\r\n`,
          'latin1',
        );
        assertProblemOrSuccess(await send(given.server.url, request), target.slice(0, 80));
      },
    ),
    { numRuns: 250, seed: 42 },
  );
});

test('security: raw header bytes (invalid UTF-8, NUL, huge, repeated) never yield a 5xx or a non-problem error', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...ROUTE_LIST),
      rawBytes,
      fc.constantFrom('authorization', 'x-junk', 'accept', 'host', 'content-type', 'x-request-id'),
      fc.integer({ min: 1, max: 3 }),
      fc.boolean(),
      async (route, bytes, name, repeats, huge) => {
        const value = huge ? Buffer.concat([bytes, Buffer.alloc(20_000, 0x61)]) : bytes;
        const lines = [
          Buffer.from(
            `GET ${pathFor(route, given.world)} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${given.world.token}\r\n`,
            'latin1',
          ),
        ];
        for (let i = 0; i < repeats; i++)
          lines.push(Buffer.from(`${name}: `, 'latin1'), value, Buffer.from('\r\n', 'latin1'));
        lines.push(Buffer.from('Connection: close\r\n\r\n', 'latin1'));
        const r = await send(given.server.url, Buffer.concat(lines));
        assertProblemOrSuccess(r, `${route.id} ${name} ×${repeats}${huge ? ' huge' : ''}`);
      },
    ),
    { numRuns: 150, seed: 7 },
  );
});

test('security: the media host answers junk links with 4xx problem+json, never 5xx', async () => {
  const link = (await given.server.api.get(pathFor('getAudio', given.world), { token: given.world.token }))
    .body.audio_url as string;
  const media = new URL(link);
  await fc.assert(
    fc.asyncProperty(
      segment,
      segment,
      segment,
      fc.constantFrom('GET', 'HEAD', 'POST', 'DELETE'),
      async (p, e, s, method) => {
        const target = `/media/${p}?expires=${e}&sig=${s}&type=${p}`;
        const r = await send(
          media.origin,
          Buffer.from(
            `${method} ${target} HTTP/1.1\r\nHost: x\r\nRange: bytes=${e}\r\nConnection: close\r\n\r\n`,
            'latin1',
          ),
        );
        assert.ok(r.status >= 200 && r.status < 500, `${method} ${target.slice(0, 60)} → ${r.status}`);
        if (r.status >= 400 && method !== 'HEAD') {
          assert.match(r.headers['content-type'] ?? '', /problem\+json/);
          assert.ok((REASON_CODES as string[]).includes(JSON.parse(r.body).reason_code));
        }
      },
    ),
    { numRuns: 150, seed: 99 },
  );
});

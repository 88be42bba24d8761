/**
 * Every answer of the HTTP layer is problem+json, on the API, media and admin ports alike,
 * including those Node's HTTP server would give by itself: an HTTP/1.1 request without `Host`
 * (400), `CONNECT` (405 with `Allow: GET, HEAD`, where Node would only close the connection), and
 * any other method Node can parse on a known path (405).
 */
import assert from 'node:assert/strict';
import { METHODS } from 'node:http';
import { before, test } from 'node:test';
import { ROUTE_LIST } from '../../src/contract/routes.js';
import { type RawResponse, rawRequest, requestText } from '../support/rawHttp.js';
import { useServerWithWorld } from '../support/serverWithWorld.js';
import { forEachStore } from '../support/stores.js';
import { pathFor } from '../support/world.js';

function assertProblem(answer: RawResponse, status: number, reasonCode: string, what: string): void {
  assert.equal(answer.status, status, `${what}: ${answer.raw.slice(0, 300)}`);
  assert.match(answer.headers['content-type'] ?? '', /^application\/problem\+json/, what);
  const body = JSON.parse(answer.body);
  assert.equal(body.status, status, what);
  assert.equal(body.reason_code, reasonCode, what);
  assert.equal(body.request_id, answer.headers['x-request-id'], what);
  assert.equal(typeof body.title, 'string', what);
  assert.equal(typeof body.detail, 'string', what);
  if (status === 405) assert.equal(answer.headers.allow, 'GET, HEAD', what);
}

/** Methods other than GET and HEAD that Node's parser accepts (CONNECT has its own test). */
const OTHER_METHODS = METHODS.filter((m) => !['GET', 'HEAD', 'CONNECT'].includes(m));

forEachStore('answers of the listeners', (kind) => {
  const given = useServerWithWorld(kind, { env: { EDS_ADMIN_PORT: '0' } });
  let ports: { name: string; url: string; path: string }[];
  before(async () => {
    const link = new URL(
      (await given.server.api.get(pathFor('getAudio', given.world), { token: given.world.token })).body
        .audio_url,
    );
    ports = [
      { name: 'api', url: given.server.url, path: pathFor('listEncounters', given.world) },
      { name: 'media', url: given.server.mediaUrl!, path: `${link.pathname}${link.search}` },
      { name: 'admin', url: given.server.adminUrl!, path: '/metrics' },
    ];
  });

  test('error: an HTTP/1.1 request without Host → 400 problem+json on every port (HTTP/1.0 needs none)', async () => {
    for (const port of ports) {
      const answer = await rawRequest(port.url, requestText(`GET ${port.path} HTTP/1.1`));
      assertProblem(answer, 400, 'route_not_found', `${port.name} without Host`);
      assert.match(JSON.parse(answer.body).detail, /Host/);
    }
    const old = await rawRequest(given.server.url, requestText(`GET ${ports[0]!.path} HTTP/1.0`));
    assertProblem(old, 401, 'missing_bearer', 'HTTP/1.0 without Host reaches the route');
  });

  test('error: CONNECT → 405 problem+json with Allow: GET, HEAD on every port', async () => {
    for (const port of ports) {
      const answer = await rawRequest(
        port.url,
        'CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n',
      );
      assertProblem(answer, 405, 'method_not_allowed', `${port.name} CONNECT`);
    }
  });

  test('error: every other method Node parses → 405 problem+json with Allow on each route and port', async () => {
    const targets = [
      ...ROUTE_LIST.map((route) => ({
        name: route.id,
        url: given.server.url,
        path: pathFor(route, given.world),
      })),
      ...ports.slice(1),
    ];
    for (const target of targets) {
      for (const method of OTHER_METHODS) {
        const answer = await rawRequest(
          target.url,
          requestText(`${method} ${target.path} HTTP/1.1`, [
            'Host: 127.0.0.1',
            `Authorization: Bearer ${given.world.token}`,
            'Content-Length: 0',
          ]),
        );
        assertProblem(answer, 405, 'method_not_allowed', `${method} ${target.name}`);
      }
    }
  });

  test('error: unknown paths on the admin port → 404 problem+json', async () => {
    const answer = await rawRequest(
      given.server.adminUrl!,
      requestText('GET / HTTP/1.1', ['Host: 127.0.0.1']),
    );
    assertProblem(answer, 404, 'route_not_found', 'admin /');
  });
});

/**
 * What a client writes in the request line and headers cannot steer the service (decisions.md,
 * Hardening): an absolute-form target is answered as its path and query, and its authority
 * reaches no header, body, log line or audit record; two Authorization headers identify nobody.
 * Sent over plain sockets, since HTTP clients will not send these requests.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ROUTE_LIST } from '../../src/contract/routes.js';
import { rawRequest, requestText } from '../support/rawHttp.js';
import { useServerWithWorld } from '../support/serverWithWorld.js';
import { forEachStore } from '../support/stores.js';
import { AUDIO_BYTES, pathFor } from '../support/world.js';

const AUTHORITY = 'user:pw@evil.example:444';
const FOREIGN = /evil\.example|user:pw/;

forEachStore('the request line', (kind) => {
  const given = useServerWithWorld(kind, { env: { EDS_ADMIN_PORT: '0' } });

  const absoluteGet = (base: string, target: string, headers: string[] = []) =>
    rawRequest(
      base,
      requestText(`GET https://${AUTHORITY}${target} HTTP/1.1`, ['Host: 127.0.0.1', ...headers]),
    );

  test('security: an absolute-form target is answered as its path and query on every route, and its authority appears nowhere', async () => {
    const bearer = `Authorization: Bearer ${given.world.token}`;
    for (const route of ROUTE_LIST) {
      const path = pathFor(route, given.world);
      const query = route.id === 'listEncounters' ? '?limit=1' : '';
      const served = await absoluteGet(given.server.url, `${path}${query}`, [bearer]);
      assert.equal(served.status, 200, `${route.id}: ${served.raw.slice(0, 300)}`);
      assert.doesNotMatch(served.raw, FOREIGN, route.id);
      if (route.id === 'listEncounters') {
        assert.match(
          served.headers.link ?? '',
          /^<\/external\/v1\/encounters\?limit=1&offset=1>; rel="next"/,
        );
      }
      const refused = await absoluteGet(given.server.url, `${path}?owners=1`, [bearer]);
      assert.equal(refused.status, 400);
      assert.equal(JSON.parse(refused.body).type, '/docs/problems#unsupported_filter');
      assert.doesNotMatch(refused.raw, FOREIGN, route.id);
    }
    const unknown = await absoluteGet(given.server.url, '/external/v1/nothing-here');
    assert.equal(JSON.parse(unknown.body).reason_code, 'route_not_found');
    assert.doesNotMatch(unknown.raw, FOREIGN);
    const bare = await rawRequest(
      given.server.url,
      requestText(`GET https://${AUTHORITY}?limit=1 HTTP/1.1`, ['Host: 127.0.0.1']),
    );
    assert.equal(bare.status, 404, 'no path: the root, which is no route');
    assert.doesNotMatch(bare.raw, FOREIGN);

    await given.server.flushAudit();
    const audit = await given.server.services.store.db.selectFrom('audit_log').selectAll().execute();
    assert.ok(audit.length >= ROUTE_LIST.length * 2);
    assert.doesNotMatch(JSON.stringify(audit), FOREIGN, 'audit records');
    const requestLines = given.server.logs.filter((line) => line.includes('"msg":"request"'));
    assert.ok(requestLines.some((line) => line.includes('"path":"/external/v1/encounters"')));
    assert.doesNotMatch(given.server.logs.join('\n'), FOREIGN, 'log lines');
  });

  test('security: the media host and the admin port reduce an absolute-form target too', async () => {
    const link = new URL(
      (await given.server.api.get(pathFor('getAudio', given.world), { token: given.world.token })).body
        .audio_url,
    );
    const audio = await absoluteGet(given.server.mediaUrl!, `${link.pathname}${link.search}`);
    assert.equal(audio.status, 200, audio.raw.slice(0, 300));
    assert.equal(audio.body, AUDIO_BYTES.toString('utf8'));
    assert.doesNotMatch(audio.raw, FOREIGN);

    const metrics = await absoluteGet(given.server.adminUrl!, '/metrics');
    assert.equal(metrics.status, 200);
    assert.match(metrics.body, /eds_http_open_connections\{port="api"\}/);

    const mediaLines = given.server.logs.filter((line) => line.includes('"msg":"media request"'));
    assert.ok(mediaLines.some((line) => line.includes(`"path":"${link.pathname}"`)));
    assert.doesNotMatch(given.server.logs.join('\n'), FOREIGN, 'log lines');
  });

  test("security: with two Authorization headers, another organization's key first discloses nothing and is audited as malformed", async () => {
    const path = pathFor('getEncounter', given.world, { encounter: given.world.encounterB });
    const answer = await rawRequest(
      given.server.url,
      requestText(`GET ${path} HTTP/1.1`, [
        'Host: 127.0.0.1',
        `Authorization: Bearer ${given.world.tokenB}`,
        `Authorization: Bearer ${given.world.token}`,
      ]),
    );
    assert.equal(answer.status, 401);
    const problem = JSON.parse(answer.body);
    assert.equal(problem.reason_code, 'malformed_token');
    assert.doesNotMatch(answer.body, new RegExp(given.world.encounterB));
    await given.server.flushAudit();
    const record = await given.server.services.store.db
      .selectFrom('audit_log')
      .selectAll()
      .where('request_id', '=', problem.request_id)
      .executeTakeFirst();
    assert.equal(record?.reason_code, 'malformed_token');
    assert.equal(record?.key_id, null, 'neither key is taken for the caller');
  });
});

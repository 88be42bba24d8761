/**
 * A route the operator announced for retirement tells every caller so on every answer:
 * `Deprecation` (RFC 9745, `@<epoch seconds>`), `Sunset` (RFC 8594, an HTTP-date) and a `Link`
 * with `rel="deprecation"` to the notice, on 200, 304, errors and HEAD alike; the list route
 * keeps its paging links beside it. Routes not announced carry none, and the OpenAPI document
 * marks the announced operation deprecated.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useServerWithWorld } from '../support/serverWithWorld.js';
import { pathFor } from '../support/world.js';

const NOTICE = 'https://partners.example.com/changes/list-encounters-v2';
const DEPRECATIONS = {
  listEncounters: { deprecation: '2026-12-01T00:00:00Z', sunset: '2027-06-01T00:00:00Z', link: NOTICE },
};
const EXPECTED = {
  deprecation: `@${Date.parse('2026-12-01T00:00:00Z') / 1000}`,
  sunset: 'Tue, 01 Jun 2027 00:00:00 GMT',
  link: `<${NOTICE}>; rel="deprecation"; type="text/html"`,
};

const given = useServerWithWorld('sqlite', { env: { EDS_DEPRECATIONS: JSON.stringify(DEPRECATIONS) } });

function assertAnnounced(headers: Headers, where: string): void {
  assert.equal(headers.get('deprecation'), EXPECTED.deprecation, where);
  assert.equal(headers.get('sunset'), EXPECTED.sunset, where);
  assert.ok(headers.get('link')?.includes(EXPECTED.link), `${where}: ${headers.get('link')}`);
}

test('happy: a 200 of the announced route carries Deprecation, Sunset and the notice beside its paging links', async () => {
  const r = await given.server.api.get(`${pathFor('listEncounters', given.world)}?limit=1`, {
    token: given.world.token,
  });
  assert.equal(r.status, 200);
  assertAnnounced(r.headers, '200');
  assert.match(r.headers.get('link') ?? '', /rel="next"/);
  assert.match(r.headers.get('link') ?? '', /rel="first"/);
});

test('happy: a 304, a refusal and a HEAD of the announced route carry them too', async () => {
  const path = pathFor('listEncounters', given.world);
  const first = await given.server.api.get(path, { token: given.world.token });
  const etag = first.headers.get('etag')!;
  const notModified = await given.server.api.get(path, {
    token: given.world.token,
    headers: { 'if-none-match': etag },
  });
  assert.equal(notModified.status, 304);
  assertAnnounced(notModified.headers, '304');
  const refused = await given.server.api.get(path, {});
  assert.equal(refused.status, 401);
  assertAnnounced(refused.headers, '401');
  const invalid = await given.server.api.get(`${path}?limit=0`, { token: given.world.token });
  assert.equal(invalid.status, 422);
  assertAnnounced(invalid.headers, '422');
  const head = await given.server.api.get(path, { token: given.world.token, method: 'HEAD' });
  assert.equal(head.status, 200);
  assertAnnounced(head.headers, 'HEAD');
});

test('happy: routes that are not announced carry no deprecation fields', async () => {
  const r = await given.server.api.get(pathFor('getEncounter', given.world), { token: given.world.token });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('deprecation'), null);
  assert.equal(r.headers.get('sunset'), null);
  assert.equal(r.headers.get('link'), null);
});

test('happy: the OpenAPI document marks the announced operation deprecated, with its dates', async () => {
  const doc = await given.server.api.openapi();
  const list = doc.paths['/external/v1/encounters'].get;
  assert.equal(list.deprecated, true);
  assert.match(list.description, /Deprecated\*\* since 2026-12-01; it stops answering after 2027-06-01/);
  assert.ok(list.description.includes(NOTICE));
  assert.equal(doc.paths['/external/v1/encounters/{encounter_id}'].get.deprecated, undefined);
});

/**
 * Conditional requests (decisions.md, "Conditional requests and paging links"): routes 1-4 carry a
 * strong ETag that changes with the body; If-None-Match with the current tag answers 304 with no
 * body and the same API headers, only after the same authorization and checks as a 200, and is
 * audited. The audio link has no ETag.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readAudit } from '../../src/store/audit.js';
import { useServerWithWorld } from '../support/serverWithWorld.js';
import { forEachStore } from '../support/stores.js';
import { pathFor } from '../support/world.js';

const CONDITIONAL = ['listEncounters', 'getEncounter', 'getDocument', 'getTranscript'] as const;

forEachStore('conditional requests', (kind) => {
  const given = useServerWithWorld(kind, { env: { EDS_AUDIT_FLUSH_MS: '20' } });

  async function tagOf(path: string): Promise<string> {
    const r = await given.server.api.get(path, { token: given.world.token });
    assert.equal(r.status, 200, path);
    const tag = r.headers.get('etag');
    assert.match(tag ?? '', /^"[A-Za-z0-9_-]{20,}"$/, `${path}: a strong ETag`);
    return tag!;
  }

  async function auditRowOf(requestId: string) {
    for (;;) {
      for await (const row of readAudit(given.server.services.store.db, {})) {
        if (row.request_id === requestId) return row;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  for (const route of CONDITIONAL) {
    test(`happy: ${route} answers 304 with no body and the API headers for its current ETag, and is audited`, async () => {
      const path = pathFor(route, given.world);
      const tag = await tagOf(path);
      assert.equal(await tagOf(path), tag, 'the same bytes keep their tag');
      const r = await given.server.api.get(path, {
        token: given.world.token,
        headers: { 'if-none-match': tag },
      });
      assert.equal(r.status, 304);
      assert.equal(r.text, '');
      assert.equal(r.headers.get('etag'), tag);
      assert.equal(r.headers.get('cache-control'), 'no-store');
      assert.match(r.headers.get('x-request-id') ?? '', /^req_/);
      const row = await auditRowOf(r.headers.get('x-request-id')!);
      assert.equal(row.status, 304);
      assert.equal(row.route, route);
      assert.equal(row.organization_id, given.world.orgA);
    });
  }

  test('happy: a tag in a list, a weak form of it, or * also matches; another tag gets the 200', async () => {
    const path = pathFor('getEncounter', given.world);
    const tag = await tagOf(path);
    for (const header of [`"other", ${tag}`, `W/${tag}`, '*']) {
      const r = await given.server.api.get(path, {
        token: given.world.token,
        headers: { 'if-none-match': header },
      });
      assert.equal(r.status, 304, header);
    }
    const stale = await given.server.api.get(path, {
      token: given.world.token,
      headers: { 'if-none-match': '"stale"' },
    });
    assert.equal(stale.status, 200);
    assert.equal(stale.body.encounter.encounter_id, given.world.encounter);
  });

  test('security: a current tag never skips authorization or the encounter checks', async () => {
    const mine = pathFor('getEncounter', given.world);
    const tag = await tagOf(mine);
    const anonymous = await given.server.api.get(mine, { headers: { 'if-none-match': tag } });
    assert.equal(anonymous.status, 401);
    const otherOrg = await given.server.api.get(mine, {
      token: given.world.tokenB,
      headers: { 'if-none-match': tag },
    });
    assert.equal(otherOrg.status, 403);
    assert.equal(otherOrg.body.reason_code, 'cross_organization_denied');
    const query = await given.server.api.get(`${pathFor('listEncounters', given.world)}?limit=0`, {
      token: given.world.token,
      headers: { 'if-none-match': '*' },
    });
    assert.equal(query.body.reason_code, 'invalid_limit', 'query validation runs before 304');
  });

  test('happy: a change to what a body shows changes its tag; the old tag then gets a 200', async () => {
    const encounterPath = pathFor('getEncounter', given.world);
    const listPath = pathFor('listEncounters', given.world);
    const before = { encounter: await tagOf(encounterPath), list: await tagOf(listPath) };
    // A new document in the encounter changes its summary, so its detail and every list page.
    await given.server.fixtures.document(given.world.orgA, given.world.encounter, { title: 'Addendum' });
    const encounter = await given.server.api.get(encounterPath, {
      token: given.world.token,
      headers: { 'if-none-match': before.encounter },
    });
    assert.equal(encounter.status, 200);
    assert.notEqual(encounter.headers.get('etag'), before.encounter);
    const list = await given.server.api.get(listPath, {
      token: given.world.token,
      headers: { 'if-none-match': before.list },
    });
    assert.equal(list.status, 200);
    assert.notEqual(list.headers.get('etag'), before.list);
  });

  test('happy: list pages with the same items but other paging numbers have other tags', async () => {
    const list = pathFor('listEncounters', given.world);
    const tags = new Set([
      await tagOf(`${list}?limit=50`),
      await tagOf(`${list}?limit=51`),
      await tagOf(`${list}?offset=5`),
      await tagOf(`${list}?offset=6`),
    ]);
    assert.equal(tags.size, 4);
  });

  test('happy: the audio link carries no ETag and ignores If-None-Match', async () => {
    const r = await given.server.api.get(pathFor('getAudio', given.world), {
      token: given.world.token,
      headers: { 'if-none-match': '*' },
    });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('etag'), null);
  });
});

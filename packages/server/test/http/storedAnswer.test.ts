/**
 * A stored answer long enough to be sent as bytes (a long document) answers exactly as a short
 * one: its length counted in bytes, not characters, the same body, ETag and type, HEAD with GET's
 * length and no body, and 304 with no body. A list page, whose summaries are written into its
 * bytes one by one, keeps every character of each.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useServerWithWorld } from '../support/serverWithWorld.js';
import { forEachStore } from '../support/stores.js';
import { pathFor } from '../support/world.js';

/** Two-byte and four-byte characters in UTF-8: 6,000 characters, well over 4 KB. */
const LONG_CONTENT = 'Observação do médico: pressão estável 💊 '.repeat(150);

/** An encounter type of one-, two-, three- and four-byte characters in UTF-8. */
const ODD_TYPE = 'consulta médica — 💊 ';

forEachStore('a long stored answer', (kind) => {
  let path = '';
  const given = useServerWithWorld(kind, {}, async ({ server, world }) => {
    const document = await server.fixtures.document(world.orgA, world.encounter, { content: LONG_CONTENT });
    path = pathFor('getDocument', world, { document });
    for (let i = 0; i < 60; i++) {
      await server.fixtures.encounter(world.orgA, {
        encounterType: `${ODD_TYPE}${i}`,
        createdAt: 1_700_000_000_000 + i,
      });
    }
  });

  test('happy: a list page of summaries with multi-byte characters has each intact and its byte length', async () => {
    const list = await given.server.api.get(
      `${pathFor('listEncounters', given.world)}?limit=50&sort_order=asc`,
      {
        token: given.world.token,
      },
    );
    assert.equal(list.status, 200);
    const items = (list.body as { items: { encounter_type: string }[] }).items;
    assert.equal(items.length, 50);
    assert.deepEqual(
      items.map((item) => item.encounter_type),
      Array.from({ length: 50 }, (_, i) => `${ODD_TYPE}${i}`),
    );
    assert.equal(list.headers.get('content-length'), String(Buffer.byteLength(list.text)));
    assert.ok(Buffer.byteLength(list.text) > list.text.length, 'multi-byte characters, counted in bytes');
  });

  test('happy: a body over 4 KB has its byte length, ETag and type, and HEAD and 304 carry no body', async () => {
    const get = await given.server.api.get(path, { token: given.world.token });
    assert.equal(get.status, 200);
    const body = get.body as { document?: { content?: { text?: unknown } } };
    assert.equal(body.document?.content?.text, LONG_CONTENT, 'the content as stored, every character intact');
    assert.ok(get.text.length >= 4096);
    assert.equal(get.headers.get('content-length'), String(Buffer.byteLength(get.text)));
    assert.equal(get.headers.get('content-type'), 'application/json; charset=utf-8');
    const etag = get.headers.get('etag');
    assert.ok(etag);

    const head = await given.server.api.get(path, { token: given.world.token, method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
    assert.equal(head.headers.get('content-length'), get.headers.get('content-length'));
    assert.equal(head.headers.get('etag'), etag);

    const notModified = await given.server.api.get(path, {
      token: given.world.token,
      headers: { 'If-None-Match': etag },
    });
    assert.equal(notModified.status, 304);
    assert.equal(notModified.text, '');
    assert.equal(notModified.headers.get('etag'), etag);
  });
});

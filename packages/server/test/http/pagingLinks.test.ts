/** Route 1's RFC 8288 `Link` header (decisions.md, Conditional requests and paging links). */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { pagingLinks } from '../../src/http/pagingLinks.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { forEachStore } from '../support/stores.js';

forEachStore('list paging links', (kind) => {
  let server: TestServer;
  let token: string;
  before(async () => {
    server = await startTestServer(kind);
    const org = await server.fixtures.organization();
    for (let i = 0; i < 5; i++) {
      await server.fixtures.encounter(org, { createdAt: Date.parse('2026-05-01T10:00:00Z') + i * 60_000 });
    }
    ({ token } = await server.fixtures.key(org));
  });
  after(() => server.close());

  const links = async (query: string) => {
    const r = await server.api.get(`/external/v1/encounters${query}`, { token });
    assert.equal(r.status, 200, r.text);
    return r.headers.get('link');
  };

  test('the first page links next and first; the same query with only offset changed', async () => {
    assert.equal(
      await links('?sort_order=asc&limit=2'),
      '</external/v1/encounters?sort_order=asc&limit=2&offset=2>; rel="next", ' +
        '</external/v1/encounters?sort_order=asc&limit=2&offset=0>; rel="first"',
    );
  });

  test('a middle page links next, prev and first, keeping every other parameter as sent', async () => {
    assert.equal(
      await links('?limit=2&offset=2&start_at=2026-05-01T00%3A00%3A00Z'),
      '</external/v1/encounters?limit=2&offset=4&start_at=2026-05-01T00%3A00%3A00Z>; rel="next", ' +
        '</external/v1/encounters?limit=2&offset=0&start_at=2026-05-01T00%3A00%3A00Z>; rel="prev", ' +
        '</external/v1/encounters?limit=2&offset=0&start_at=2026-05-01T00%3A00%3A00Z>; rel="first"',
    );
  });

  test('the last page has no next; prev never goes below offset 0', async () => {
    assert.equal(
      await links('?limit=2&offset=4'),
      '</external/v1/encounters?limit=2&offset=2>; rel="prev", </external/v1/encounters?limit=2&offset=0>; rel="first"',
    );
    assert.equal(
      await links('?limit=4&offset=1'),
      '</external/v1/encounters?limit=4&offset=0>; rel="prev", </external/v1/encounters?limit=4&offset=0>; rel="first"',
    );
  });

  test('a query without parameters gets offset added', async () => {
    assert.equal(
      await links(''),
      '</external/v1/encounters?offset=0>; rel="first"',
      'all 5 fit on the default page of 50',
    );
  });
});

test('no next link past the offset limit, even when more items exist', () => {
  const header = pagingLinks('/external/v1/encounters?limit=100&offset=9950', {
    limit: 100,
    offset: 9950,
    total: 50_000,
  });
  assert.doesNotMatch(header, /rel="next"/);
  const within = pagingLinks('/external/v1/encounters?limit=50&offset=9950', {
    limit: 50,
    offset: 9950,
    total: 50_000,
  });
  assert.match(within, /offset=10000>; rel="next"/);
});

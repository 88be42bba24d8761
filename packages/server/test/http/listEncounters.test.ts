/**
 * Route 1 beyond the common matrix: ordering, pagination, created_at windows, exact totals
 * (checked against a brute-force count across day boundaries, which exercises the roll-ups),
 * demo/training exclusion, and value validation in decisions.md's order.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../support/server.js';
import { forEachStore } from '../support/stores.js';

const HOUR = 3_600_000;
const BASE = Date.parse('2026-03-01T00:00:00.000Z');

forEachStore('list encounters', (kind) => {
  let server: TestServer;
  let token: string;
  /** created_at of every listable encounter, by id. */
  const created = new Map<string, number>();

  before(async () => {
    server = await startTestServer(kind);
    const f = server.fixtures;
    const org = await f.organization();
    const other = await f.organization();
    const patient = await f.patient(org);
    // 60 encounters over ~5 days at irregular hours, with ties on created_at.
    for (let i = 0; i < 60; i++) {
      const at = BASE + Math.floor(i / 3) * 7 * HOUR + (i % 3 === 2 ? 0 : 0);
      const id = await f.encounter(org, { patientId: patient, createdAt: at });
      created.set(id, at);
    }
    for (let i = 0; i < 5; i++)
      await f.encounter(org, { patientId: patient, createdAt: BASE + i * HOUR, demoTraining: true });
    for (let i = 0; i < 5; i++) await f.encounter(other, { createdAt: BASE + i * HOUR });
    token = (await f.key(org)).token;
  });
  after(() => server.close());

  const list = (query = '') => server.api.get(`/external/v1/encounters${query}`, { token });

  function expectedOrder(sort: 'asc' | 'desc', startMs = -Infinity, endMs = Infinity): string[] {
    const ids = [...created.entries()]
      .filter(([, at]) => at >= startMs && at < endMs)
      .sort(([a, x], [b, y]) => x - y || (a < b ? -1 : a > b ? 1 : 0))
      .map(([id]) => id);
    return sort === 'asc' ? ids : ids.reverse();
  }

  async function collect(query: string, limit: number): Promise<{ ids: string[]; totals: Set<number> }> {
    const ids: string[] = [];
    const totals = new Set<number>();
    for (let offset = 0; ; offset += limit) {
      const r = await list(`?limit=${limit}&offset=${offset}${query}`);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.limit, limit);
      assert.equal(r.body.offset, offset);
      totals.add(r.body.total);
      ids.push(...r.body.items.map((e: { encounter_id: string }) => e.encounter_id));
      if (r.body.items.length < limit) return { ids, totals };
    }
  }

  test('happy: defaults are limit 50, offset 0, desc; total counts only listable encounters of the caller', async () => {
    const r = await list();
    assert.equal(r.body.limit, 50);
    assert.equal(r.body.offset, 0);
    assert.equal(r.body.total, 60);
    assert.deepEqual(
      r.body.items.map((e: { encounter_id: string }) => e.encounter_id),
      expectedOrder('desc').slice(0, 50),
    );
  });

  test('happy: every item exactly once across pages, both orders, ties broken by encounter_id in sort direction', async () => {
    for (const sort of ['asc', 'desc'] as const) {
      const { ids, totals } = await collect(`&sort_order=${sort}`, 7);
      assert.deepEqual(ids, expectedOrder(sort));
      assert.deepEqual([...totals], [60]);
    }
  });

  test('happy: start_at is inclusive and end_at exclusive; totals match a brute-force count for many windows', async () => {
    const instants = [...new Set(created.values())].sort((a, b) => a - b);
    const windows: [number | undefined, number | undefined][] = [
      [instants[3], instants[10]],
      [instants[0], undefined],
      [undefined, instants[7]],
      [BASE + 24 * HOUR, BASE + 72 * HOUR],
      [BASE + 23 * HOUR + 1, BASE + 49 * HOUR - 1],
      [BASE - 10 * 24 * HOUR, BASE + 10 * 24 * HOUR],
      [instants[5], instants[5]! + 1],
    ];
    for (const [start, end] of windows) {
      let query = '';
      if (start !== undefined) query += `&start_at=${new Date(start).toISOString()}`;
      if (end !== undefined) query += `&end_at=${new Date(end).toISOString()}`;
      const { ids, totals } = await collect(`&sort_order=asc${query}`, 25);
      const expected = expectedOrder('asc', start ?? -Infinity, end ?? Infinity);
      assert.deepEqual(ids, expected, `window ${query}`);
      assert.deepEqual([...totals], [expected.length], `total for ${query}`);
    }
  });

  test('happy: offsets and datetimes in other offsets and with fractional seconds are honoured', async () => {
    const at = [...created.values()].sort((a, b) => a - b)[9]!;
    const local = new Date(at + 2 * HOUR).toISOString().replace('Z', '+02:00');
    const r = await list(`?sort_order=asc&start_at=${encodeURIComponent(local)}`);
    assert.equal(r.body.total, expectedOrder('asc', at).length);
    // 0.0005 s after an encounter's instant excludes it from a start bound and includes it in an end bound.
    const justAfter = new Date(at)
      .toISOString()
      .replace('Z', '')
      .replace(/\.(\d{3})$/, '.$10005Z');
    const startAfter = await list(`?sort_order=asc&start_at=${justAfter}`);
    assert.equal(startAfter.body.total, expectedOrder('asc', at + 1).length);
    const endAfter = await list(`?sort_order=asc&end_at=${justAfter}`);
    assert.equal(endAfter.body.total, expectedOrder('asc', -Infinity, at + 1).length);
  });

  test('happy: an offset past the end gives an empty page with the exact total', async () => {
    const r = await list('?offset=10000&limit=100');
    assert.deepEqual(r.body.items, []);
    assert.equal(r.body.total, 60);
  });

  test('error: invalid values map to their own reason codes, naming the parameter (null for the start/end rule)', async () => {
    const cases: [string, string, string | null][] = [
      ['limit=0', 'invalid_limit', 'limit'],
      ['limit=101', 'invalid_limit', 'limit'],
      ['limit=', 'invalid_limit', 'limit'],
      ['limit=+5', 'invalid_limit', 'limit'],
      ['limit=05', 'invalid_limit', 'limit'],
      ['limit=1.0', 'invalid_limit', 'limit'],
      ['limit=1e2', 'invalid_limit', 'limit'],
      ['limit=%205', 'invalid_limit', 'limit'],
      ['limit=-1', 'invalid_limit', 'limit'],
      ['limit=ten', 'invalid_limit', 'limit'],
      ['limit=1&limit=2', 'invalid_limit', 'limit'],
      ['offset=10001', 'invalid_offset', 'offset'],
      ['offset=-1', 'invalid_offset', 'offset'],
      ['offset=00', 'invalid_offset', 'offset'],
      ['offset=', 'invalid_offset', 'offset'],
      ['offset=0&offset=0', 'invalid_offset', 'offset'],
      ['sort_order=ASC', 'invalid_sort', 'sort_order'],
      ['sort_order=', 'invalid_sort', 'sort_order'],
      ['sort_order=up', 'invalid_sort', 'sort_order'],
      ['sort_order=asc&sort_order=asc', 'invalid_sort', 'sort_order'],
      ['start_at=2026-05-01', 'invalid_query', 'start_at'],
      ['start_at=2026-05-01T00:00:00', 'invalid_query', 'start_at'],
      ['start_at=2026-02-30T00:00:00Z', 'invalid_query', 'start_at'],
      ['start_at=2026-05-01T24:00:00Z', 'invalid_query', 'start_at'],
      ['start_at=2026-05-01T00:00:00%2B25:00', 'invalid_query', 'start_at'],
      ['end_at=yesterday', 'invalid_query', 'end_at'],
      ['end_at=', 'invalid_query', 'end_at'],
      ['start_at=2026-05-02T00:00:00Z&end_at=2026-05-01T00:00:00Z', 'invalid_query', null],
      ['start_at=2026-05-01T00:00:00Z&end_at=2026-05-01T00:00:00Z', 'invalid_query', null],
      ['start_at=2026-05-01T02:00:00%2B02:00&end_at=2026-05-01T00:00:00Z', 'invalid_query', null],
    ];
    for (const [query, code, field] of cases) {
      const r = await list(`?${query}`);
      assert.equal(r.status, 422, `${query}: ${r.text}`);
      assert.equal(r.body.reason_code, code, query);
      assert.equal(r.body.field, field, query);
      assert.equal(r.body.message, r.body.detail, query);
    }
  });

  test('ordering: several invalid values → the first in the order limit, offset, sort_order, start_at, end_at decides code and field', async () => {
    const cases: [string, string, string][] = [
      ['end_at=x&start_at=x&sort_order=x&offset=x&limit=x', 'invalid_limit', 'limit'],
      ['end_at=x&start_at=x&sort_order=x&offset=x', 'invalid_offset', 'offset'],
      ['end_at=x&start_at=x&sort_order=x', 'invalid_sort', 'sort_order'],
      ['end_at=x&limit=5&start_at=x', 'invalid_query', 'start_at'],
      ['end_at=x&limit=5', 'invalid_query', 'end_at'],
      ['limit=0&unknown=1', 'unsupported_filter', 'unknown'],
    ];
    for (const [query, code, field] of cases) {
      const { body } = await list(`?${query}`);
      assert.deepEqual([body.reason_code, body.field], [code, field], query);
    }
  });

  test('security: the list never shows another organization or demo/training encounters', async () => {
    const { ids } = await collect('', 100);
    assert.equal(ids.length, 60);
    for (const id of ids) assert.ok(created.has(id));
  });
});

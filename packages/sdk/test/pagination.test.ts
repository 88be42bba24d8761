/**
 * Walking all pages of a window against a loopback stand-in for route 1 that enforces the
 * contract's 10,000 offset cap: every encounter exactly once, in order, also past the cap and
 * with ties on created_at at the point where the walk narrows its window.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { EncounterDataClient } from '../src/index.js';
import { listHandler, makeRows, type Row } from './support/fakeList.js';
import { type Loopback, startLoopback } from './support/loopback.js';

const servers: Loopback[] = [];
after(async () => {
  for (const s of servers) await s.close();
});

async function clientFor(rows: Row[]) {
  const server = await startLoopback(listHandler(rows));
  servers.push(server);
  return {
    server,
    eds: new EncounterDataClient({ baseUrl: server.url, apiKey: 'eds_live_test', retries: 0 }),
  };
}

function expectedOrder(rows: Row[], asc: boolean): string[] {
  return [...rows]
    .sort((a, b) => {
      const c = a.created_at.localeCompare(b.created_at) || a.encounter_id.localeCompare(b.encounter_id);
      return asc ? c : -c;
    })
    .map((r) => r.encounter_id);
}

async function collect(iterable: AsyncIterable<{ encounter_id: string }>): Promise<string[]> {
  const ids: string[] = [];
  for await (const e of iterable) ids.push(e.encounter_id);
  return ids;
}

describe('iterateEncounters', () => {
  it('walks a window of several pages in order, sending the window on every page', async () => {
    const rows = makeRows(250, (i) => i);
    const { eds, server } = await clientFor(rows);
    const start = rows[10]!.created_at;
    const end = rows[240]!.created_at;
    const ids = await collect(
      eds.iterateEncounters({ sort_order: 'asc', start_at: start, end_at: end, limit: 40 }),
    );
    assert.deepEqual(ids, expectedOrder(rows.slice(10, 240), true));
    assert.equal(server.requests.length, 6); // 230 items / 40 per page
    for (const r of server.requests) {
      const q = new URL(r.url, 'http://x').searchParams;
      assert.equal(q.get('start_at'), start);
      assert.equal(q.get('end_at'), end);
      assert.equal(q.get('sort_order'), 'asc');
    }
  });

  it('stops without an extra request when the last page is exactly full', async () => {
    const { eds, server } = await clientFor(makeRows(200, (i) => i));
    assert.equal((await collect(eds.iterateEncounters({ limit: 100 }))).length, 200);
    assert.equal(server.requests.length, 2);
  });

  it('yields nothing for an empty window', async () => {
    const { eds } = await clientFor([]);
    assert.deepEqual(await collect(eds.iterateEncounters()), []);
  });

  for (const order of ['asc', 'desc'] as const) {
    it(`goes past the 10,000 offset cap (${order}), with ties at the narrowing point, each encounter once`, async () => {
      // 10,450 encounters; every 300 consecutive ones share a created_at, so the cut falls in a tie.
      const rows = makeRows(10_450, (i) => Math.floor(i / 300));
      const { eds, server } = await clientFor(rows);
      const ids = await collect(eds.iterateEncounters({ sort_order: order }));
      assert.equal(new Set(ids).size, ids.length, 'no duplicates');
      assert.deepEqual(ids, expectedOrder(rows, order === 'asc'));
      const offsets = server.requests.map((r) =>
        Number(new URL(r.url, 'http://x').searchParams.get('offset')),
      );
      assert.ok(Math.max(...offsets) <= 10_000);
      const narrowed = server.requests.filter((r) =>
        new URL(r.url, 'http://x').searchParams.has(order === 'asc' ? 'start_at' : 'end_at'),
      );
      assert.ok(narrowed.length > 0, 'the walk narrowed its window');
    });
  }

  it('says so when more encounters share one created_at than offset paging can reach', async () => {
    const { eds } = await clientFor(makeRows(10_250, () => 0));
    await assert.rejects(collect(eds.iterateEncounters({ sort_order: 'asc' })), /share created_at/);
  });
});

describe('paginateEncounters', () => {
  it('yields pages with the served limit, offset and total', async () => {
    const { eds } = await clientFor(makeRows(120, (i) => i));
    const pages = [];
    for await (const page of eds.paginateEncounters({ limit: 50, sort_order: 'desc' })) pages.push(page);
    assert.deepEqual(
      pages.map((p) => [p.offset, p.items.length, p.total]),
      [
        [0, 50, 120],
        [50, 50, 120],
        [100, 20, 120],
      ],
    );
  });
});

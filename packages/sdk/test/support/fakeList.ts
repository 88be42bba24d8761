/**
 * A stand-in for route 1 over an in-memory list, following the contract's paging rules:
 * limit 1..100, offset 0..10,000 (422 beyond), start_at inclusive, end_at exclusive, order by
 * created_at then encounter_id in the direction of sort_order.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { json, problem } from './loopback.js';

export interface Row {
  encounter_id: string;
  created_at: string;
}

export function listHandler(rows: Row[]) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const q = url.searchParams;
    const limit = Number(q.get('limit') ?? 50);
    const offset = Number(q.get('offset') ?? 0);
    if (!(limit >= 1 && limit <= 100)) return problem(res, 422, 'invalid_limit');
    if (!(offset >= 0 && offset <= 10_000)) return problem(res, 422, 'invalid_offset');
    const start = q.get('start_at');
    const end = q.get('end_at');
    const asc = (q.get('sort_order') ?? 'desc') === 'asc';
    const matching = rows
      .filter(
        (r) =>
          (!start || Date.parse(r.created_at) >= Date.parse(start)) &&
          (!end || Date.parse(r.created_at) < Date.parse(end)),
      )
      .sort((a, b) => {
        const byTime =
          a.created_at.localeCompare(b.created_at) || a.encounter_id.localeCompare(b.encounter_id);
        return asc ? byTime : -byTime;
      });
    json(res, 200, {
      items: matching.slice(offset, offset + limit).map((r) => ({ ...r, documents: [] })),
      limit,
      offset,
      total: matching.length,
    });
  };
}

/** `count` rows; `sameInstant(i)` says which ones share one created_at (to make ties). */
export function makeRows(count: number, instantOf: (i: number) => number): Row[] {
  const t0 = Date.parse('2026-01-01T00:00:00.000Z');
  return Array.from({ length: count }, (_, i) => ({
    encounter_id: `enc_${String((i * 7919) % count).padStart(6, '0')}`,
    created_at: new Date(t0 + instantOf(i) * 1000).toISOString(),
  }));
}

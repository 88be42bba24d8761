/**
 * Walks every page of a created_at window. The API pages by offset and caps the offset at
 * 10,000, so past that point the walk narrows the window instead: it moves the bound on the
 * sort direction's side to the last created_at it has seen, restarts at offset 0, and skips the
 * encounters it already yielded at that exact instant (created_at has millisecond precision).
 *
 * There is no snapshot across calls: an encounter created inside the window while the walk runs
 * can shift offsets, so an item can repeat or be missed. Sync jobs page in ascending order with
 * overlapping windows and dedupe by encounter_id (see examples/sync.ts).
 */
import type { RequestOptions } from './transport.js';
import type { EncounterList, ListEncountersParams, SortOrder } from './types.js';

export const MAX_OFFSET = 10_000;

/** A window to walk: everything of route 1's query except the offset, which the walk drives. */
export interface EncounterWindow {
  start_at?: string | Date;
  end_at?: string | Date;
  /** Default `desc`, as the API. Use `asc` for sync jobs. */
  sort_order?: SortOrder;
  /** Page size, 1 to 100; default 100 (the fewest requests). */
  limit?: number;
}

type ListFn = (params: ListEncountersParams, opts: RequestOptions) => Promise<EncounterList>;

export async function* walkPages(
  list: ListFn,
  window: EncounterWindow,
  opts: RequestOptions,
): AsyncGenerator<EncounterList, void, undefined> {
  const limit = window.limit ?? 100;
  const sortOrder = window.sort_order ?? 'desc';
  let startAt = window.start_at;
  let endAt = window.end_at;
  let offset = 0;
  // Encounters already yielded at the instant the window was narrowed to.
  let skip: { createdAt: string; ids: Set<string> } | undefined;
  // The latest instant yielded, and every encounter yielded at it.
  let tail: { createdAt: string; ids: Set<string> } | undefined;

  for (;;) {
    const params: ListEncountersParams = { limit, offset, sort_order: sortOrder };
    if (startAt !== undefined) params.start_at = startAt;
    if (endAt !== undefined) params.end_at = endAt;
    const page = await list(params, opts);
    const fresh = page.items.filter(
      (e) => !(skip && e.created_at === skip.createdAt && skip.ids.has(e.encounter_id)),
    );
    for (const e of page.items) {
      if (!tail || tail.createdAt !== e.created_at) tail = { createdAt: e.created_at, ids: new Set() };
      tail.ids.add(e.encounter_id);
    }
    yield { ...page, items: fresh };

    const last = page.items.length < limit || page.offset + page.items.length >= page.total;
    if (last || !tail) return;
    if (offset + page.items.length <= MAX_OFFSET) {
      offset += page.items.length;
      continue;
    }
    if (skip && skip.createdAt === tail.createdAt) {
      throw new Error(
        `More than ${MAX_OFFSET + limit} encounters share created_at ${tail.createdAt}; ` +
          'offset paging cannot reach past them.',
      );
    }
    skip = { createdAt: tail.createdAt, ids: new Set(tail.ids) };
    if (sortOrder === 'asc') startAt = tail.createdAt;
    else endAt = new Date(Date.parse(tail.createdAt) + 1).toISOString();
    offset = 0;
  }
}

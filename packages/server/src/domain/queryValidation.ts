/**
 * Query validation in the contract's order: unsupported keys first (every route), then the list
 * route's values in the order limit, offset, sort_order, start_at, end_at, then start < end
 * (decisions.md). A key given twice is invalid for its own code.
 */
import { LIST_QUERY, type SortOrder } from '../contract/listQuery.js';
import type { RouteDefinition } from '../contract/routes.js';
import type { ListPage } from '../readModel/read/pages.js';
import { parseRfc3339 } from '../time.js';
import { ApiError } from './errors.js';

export type RawQuery = Record<string, string | string[] | undefined>;

/**
 * `keys` in the order the client sent them (a parsed query object lists integer-like keys
 * first); the first one the route does not take decides, and is the problem's `field`.
 */
export function rejectUnsupportedKeys(route: RouteDefinition, keys: Iterable<string>): void {
  for (const key of keys) {
    if (!route.queryKeys.includes(key)) {
      throw new ApiError(
        'unsupported_filter',
        `This route does not accept the query parameter "${printable(key)}".`,
        undefined,
        key,
      );
    }
  }
}

const CANONICAL_INTEGER = /^(0|[1-9][0-9]*)$/;

export function parseListQuery(query: RawQuery): ListPage {
  const limit = integerParam(query.limit, LIST_QUERY.limit, 'invalid_limit', 'limit');
  const offset = integerParam(query.offset, LIST_QUERY.offset, 'invalid_offset', 'offset');
  const sort = sortParam(query.sort_order);
  const start = instantParam(query.start_at, 'start_at', 'ceil');
  const end = instantParam(query.end_at, 'end_at', 'ceil');
  if (start !== undefined && end !== undefined && !(start.exact < end.exact)) {
    throw new ApiError('invalid_query', 'start_at must be earlier than end_at.');
  }
  return { limit, offset, sort, window: { startMs: start?.ms, endMs: end?.ms } };
}

function single(value: string | string[] | undefined): string | undefined | null {
  if (Array.isArray(value)) return null;
  return value;
}

function integerParam(
  raw: string | string[] | undefined,
  range: { min: number; max: number; default: number },
  code: 'invalid_limit' | 'invalid_offset',
  name: string,
): number {
  const value = single(raw);
  if (value === undefined) return range.default;
  const message = `${name} must be a whole number from ${range.min} to ${range.max}, given once.`;
  if (value === null || !CANONICAL_INTEGER.test(value) || value.length > 6) {
    throw new ApiError(code, message, undefined, name);
  }
  const n = Number(value);
  if (n < range.min || n > range.max) throw new ApiError(code, message, undefined, name);
  return n;
}

function sortParam(raw: string | string[] | undefined): SortOrder {
  const value = single(raw);
  if (value === undefined) return LIST_QUERY.defaultSort;
  if (value === null || !(LIST_QUERY.sortOrders as readonly string[]).includes(value)) {
    throw new ApiError(
      'invalid_sort',
      'sort_order must be asc or desc, given once.',
      undefined,
      'sort_order',
    );
  }
  return value as SortOrder;
}

/**
 * created_at is stored in whole milliseconds, so a bound with finer precision is rounded up:
 * for an inclusive start, `created_at >= 1.0005` equals `created_at >= 1.001`; for an exclusive
 * end, `created_at < 1.0005` equals `created_at < 1.001`.
 */
function instantParam(
  raw: string | string[] | undefined,
  name: string,
  _rounding: 'ceil',
): { ms: number; exact: number } | undefined {
  const value = single(raw);
  if (value === undefined) return undefined;
  const parsed = value === null ? undefined : parseRfc3339(value);
  if (!parsed) {
    throw new ApiError(
      'invalid_query',
      `${name} must be an RFC 3339 date-time with an offset (e.g. 2026-05-01T00:00:00Z), given once.`,
      undefined,
      name,
    );
  }
  return { ms: parsed.subMillisecond ? parsed.ms + 1 : parsed.ms, exact: parsed.exactMs };
}

/** Query keys are echoed in details; keep them short and printable. */
function printable(text: string): string {
  const clean = text.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > 40 ? `${clean.slice(0, 40)}…` : clean;
}

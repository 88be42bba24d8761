/**
 * The list route's query: which reason code each parameter's bad value answers with, the rule
 * across parameters, and the page the values select.
 */
import type { ListEncountersQuery, ListQueryValues } from '../contract/listQuery.js';
import type { ListPage } from '../readModel/read/pages.js';
import { parseRfc3339 } from '../time.js';
import { ApiError } from './errors.js';
import type { QueryRules } from './queryValidation.js';

export const LIST_QUERY_RULES: QueryRules<typeof ListEncountersQuery> = {
  reasons: {
    limit: 'invalid_limit',
    offset: 'invalid_offset',
    sort_order: 'invalid_sort',
    start_at: 'invalid_query',
    end_at: 'invalid_query',
  },
  across: (values) => {
    if (values.start_at === undefined || values.end_at === undefined) return;
    const start = parseRfc3339(values.start_at);
    const end = parseRfc3339(values.end_at);
    if (start !== undefined && end !== undefined && !(start.exactMs < end.exactMs)) {
      throw new ApiError('invalid_query', 'start_at must be earlier than end_at.');
    }
  },
};

export function listPageOf(values: ListQueryValues): ListPage {
  return {
    limit: values.limit,
    offset: values.offset,
    sort: values.sort_order,
    window: { startMs: boundMs(values.start_at), endMs: boundMs(values.end_at) },
  };
}

/**
 * created_at is stored in whole milliseconds, so a bound with finer precision is rounded up:
 * for an inclusive start, `created_at >= 1.0005` equals `created_at >= 1.001`; for an exclusive
 * end, `created_at < 1.0005` equals `created_at < 1.001`.
 */
function boundMs(text: string | undefined): number | undefined {
  const parsed = text === undefined ? undefined : parseRfc3339(text);
  if (parsed === undefined) return undefined;
  return parsed.subMillisecond ? parsed.ms + 1 : parsed.ms;
}

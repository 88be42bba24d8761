/**
 * The pages of "list, a new page each time": every window of 50 encounters, (offset k, limit 50)
 * for each k up to the contract's largest offset, then windows of 49, and so on down to 41, in
 * both sort orders, ordered so that consecutive requests read disjoint pages (offsets 0, 50,
 * 100, …, then 1, 51, …) as a sync job paging through does. Each is a set of patients no earlier
 * request carried, until the walk has used them all (about 200,000 pages): each server walks
 * them from its own start, continuing across rounds, and a walk that wraps is reported.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LIST_QUERY } from '../packages/server/src/contract/listQuery.js';
import type { PathWalk } from './wrk.js';

/** A walk from the start of the pages of a data set of `encounters`, kept in `resultsDir`. */
export function listPageWalk(encounters: number, resultsDir: string): PathWalk {
  const paths: string[] = [];
  for (const sort of ['desc', 'asc'])
    for (let limit = 50; limit > 40; limit--) {
      // The contract's largest offset bounds the walk on data sets larger than it reaches.
      const windows = Math.min(encounters - limit + 1, LIST_QUERY.offset.max + 1);
      for (let phase = 0; phase < limit; phase++)
        for (let offset = phase; offset < windows; offset += limit)
          paths.push(`/external/v1/encounters?limit=${limit}&offset=${offset}&sort_order=${sort}`);
    }
  const file = join(resultsDir, `list-pages-${encounters}-${paths.length}.txt`);
  if (!existsSync(file)) writeFileSync(file, `${paths.join('\n')}\n`);
  return { file, next: 0, paths: paths.length };
}

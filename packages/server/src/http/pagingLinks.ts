/**
 * The list route's RFC 8288 `Link` header (decisions.md, Conditional requests and paging
 * links): `first` always, `prev` when offset > 0, `next` when another page exists within the
 * offset limit. Each link is the request's own path and query with only `offset` changed —
 * every other parameter keeps its exact spelling and place — as a path-absolute reference, so
 * it stays right behind any proxy.
 */
import { LIST_QUERY } from '../contract/listQuery.js';

export interface PageShape {
  readonly limit: number;
  readonly offset: number;
  readonly total: number;
}

export function pagingLinks(requestUrl: string, page: PageShape): string {
  const at = (offset: number, rel: string) => `<${withOffset(requestUrl, offset)}>; rel="${rel}"`;
  const links: string[] = [];
  const next = page.offset + page.limit;
  if (next < page.total && next <= LIST_QUERY.offset.max) links.push(at(next, 'next'));
  if (page.offset > 0) links.push(at(Math.max(0, page.offset - page.limit), 'prev'));
  links.push(at(0, 'first'));
  return links.join(', ');
}

function withOffset(requestUrl: string, offset: number): string {
  const mark = requestUrl.indexOf('?');
  const path = mark === -1 ? requestUrl : requestUrl.slice(0, mark);
  const pairs = mark === -1 || mark === requestUrl.length - 1 ? [] : requestUrl.slice(mark + 1).split('&');
  let replaced = false;
  const query = pairs.map((pair) => {
    if (pair.split('=', 1)[0] !== 'offset') return pair;
    replaced = true;
    return `offset=${offset}`;
  });
  if (!replaced) query.push(`offset=${offset}`);
  return `${path}?${query.join('&')}`;
}

import type { ListQueryValues } from '../../contract/listQuery.js';
import { ROUTES } from '../../contract/routes.js';
import { listEncounters } from '../../domain/encounters.js';
import { LIST_QUERY_RULES, listPageOf } from '../../domain/listQuery.js';
import { pagingLinks } from '../pagingLinks.js';
import { LINK_HEADER } from '../responseHeaders.js';
import type { ApiRouteSpec } from './apiRoute.js';

export const listEncountersRoute: ApiRouteSpec<Record<string, never>> = {
  route: ROUTES.listEncounters,
  queryRules: LIST_QUERY_RULES,
  response: 'EncounterList',
  responseHeaders: LINK_HEADER,
  conditional: true,
  description:
    'Encounters of your organization, ordered by created_at (ties by encounter_id) in sort_order. ' +
    'Offset pagination without a snapshot: page by created_at windows for sync jobs. Only limit, ' +
    'offset, sort_order, start_at and end_at are accepted. The `Link` header has the `next`, `prev` ' +
    'and `first` pages (the same query with only offset changed).',
  handle: async ({ context, caller, request, reply }) => {
    const page = listPageOf(request.query as ListQueryValues);
    const { answer, total } = await listEncounters(context.services.store.db, caller, page);
    reply.header('Link', pagingLinks(request.url, { limit: page.limit, offset: page.offset, total }));
    return answer;
  },
};

import { ROUTES } from '../../contract/routes.js';
import { ListEncountersQuery } from '../../contract/schemas.js';
import { listEncounters } from '../../domain/encounters.js';
import { parseListQuery, type RawQuery } from '../../domain/queryValidation.js';
import type { ApiRouteSpec } from './apiRoute.js';

export const listEncountersRoute: ApiRouteSpec<Record<string, never>> = {
  route: ROUTES.listEncounters,
  querystring: ListEncountersQuery,
  response: 'EncounterList',
  conditional: true,
  description:
    'Encounters of your organization, ordered by created_at (ties by encounter_id) in sort_order. ' +
    'Offset pagination without a snapshot: page by created_at windows for sync jobs. Only limit, ' +
    'offset, sort_order, start_at and end_at are accepted.',
  handle: async ({ context, caller, request }) =>
    listEncounters(context.services.store.db, caller, parseListQuery(request.query as RawQuery)),
};

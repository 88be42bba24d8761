import { ROUTES } from '../../contract/routes.js';
import { EncounterParams } from '../../contract/schemas.js';
import { getEncounter } from '../../domain/encounters.js';
import type { ApiRouteSpec } from './apiRoute.js';

export const getEncounterRoute: ApiRouteSpec<{ encounter_id: string }> = {
  route: ROUTES.getEncounter,
  params: EncounterParams,
  response: 'EncounterEnvelope',
  conditional: true,
  description: 'One encounter of your organization, with its patient and document summaries. No query keys.',
  handle: async ({ context, caller, params }) =>
    getEncounter(context.services.store.db, caller, params.encounter_id),
};

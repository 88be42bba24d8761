import { ROUTES } from '../../contract/routes.js';
import { EncounterParams } from '../../contract/schemas.js';
import { getEncounter } from '../../domain/encounters.js';
import type { ApiRouteSpec } from './apiRoute.js';

export const getEncounterRoute: ApiRouteSpec<{ encounter_id: string }> = {
  route: ROUTES.getEncounter,
  params: EncounterParams,
  response: 'EncounterEnvelope',
  description: 'One encounter of your organization, with its patient and document summaries. No query keys.',
  handle: async ({ context, caller, params, request }) => {
    const encounter = await getEncounter(context.services.store.db, caller, params.encounter_id);
    request.disclosedPatientIds = [encounter.patient.patient_id];
    return { encounter };
  },
};

import { ROUTES } from '../../contract/routes.js';
import { DocumentParams } from '../../contract/schemas.js';
import { getTranscript } from '../../domain/documents.js';
import type { ApiRouteSpec } from './apiRoute.js';

export const getTranscriptRoute: ApiRouteSpec<{ encounter_id: string; document_id: string }> = {
  route: ROUTES.getTranscript,
  params: DocumentParams,
  response: 'Transcript',
  conditional: true,
  description: 'The finalized speaker turns of an ambient transcript document.',
  handle: async ({ context, caller, params }) =>
    getTranscript(context.services.store.db, caller, params.encounter_id, params.document_id),
};

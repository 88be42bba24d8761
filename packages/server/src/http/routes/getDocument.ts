import { ROUTES } from '../../contract/routes.js';
import { DocumentParams } from '../../contract/schemas.js';
import { getDocument } from '../../domain/documents.js';
import type { ApiRouteSpec } from './apiRoute.js';

export const getDocumentRoute: ApiRouteSpec<{ encounter_id: string; document_id: string }> = {
  route: ROUTES.getDocument,
  params: DocumentParams,
  response: 'DocumentEnvelope',
  conditional: true,
  description:
    'A document of the encounter. schema_type document carries markdown content; ambient_transcript ' +
    'returns metadata only (no content field): fetch its turns from the transcript route.',
  handle: async ({ context, caller, params }) =>
    getDocument(context.services.store.db, caller, params.encounter_id, params.document_id),
};

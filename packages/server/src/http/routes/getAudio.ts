import { ROUTES } from '../../contract/routes.js';
import { DocumentParams } from '../../contract/schemas.js';
import { getAudioLink } from '../../domain/documents.js';
import type { ApiRouteSpec } from './apiRoute.js';

export const getAudioRoute: ApiRouteSpec<{ encounter_id: string; document_id: string }> = {
  route: ROUTES.getAudio,
  params: DocumentParams,
  response: 'AudioLink',
  description:
    'A short-lived signed link to the recording of an ambient transcript document. Do not store it, ' +
    'log it, or use it after expires_at.',
  handle: async ({ context, caller, params, request }) => {
    const answer = await getAudioLink(
      context.services.store.db,
      { media: context.services.media, linkTtlSeconds: context.services.config.media.linkTtlSeconds },
      caller,
      params.encounter_id,
      params.document_id,
    );
    request.disclosedPatientIds = answer.disclosedPatientIds;
    return answer.body;
  },
};

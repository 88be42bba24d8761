import type { ApiRouteSpec } from './apiRoute.js';
import { getAudioRoute } from './getAudio.js';
import { getDocumentRoute } from './getDocument.js';
import { getEncounterRoute } from './getEncounter.js';
import { getTranscriptRoute } from './getTranscript.js';
import { listEncountersRoute } from './listEncounters.js';

/** The contract's five routes, in the contract's order. */
export const API_ROUTES: ApiRouteSpec<any>[] = [
  listEncountersRoute,
  getEncounterRoute,
  getDocumentRoute,
  getTranscriptRoute,
  getAudioRoute,
];

/**
 * Example bodies for the OpenAPI document: one per success schema, one per reason code, one
 * webhook event. Invented data (no real person, clinic or recording); the IDs have the real shape
 * (`enc_` and 22 base62 characters). The OpenAPI test validates each against its schema, so an
 * example cannot drift from the contract.
 */
import { ApiError } from '../domain/errors.js';
import { problemBody } from '../http/problem.js';
import type { ReasonCode } from './reasons.js';
import type {
  AudioLinkBody,
  DocumentDetailBody,
  EncounterBody,
  EncounterListBody,
  ProblemBody,
  TranscriptBody,
  WebhookEventBody,
} from './schemas.js';
import { WEBHOOK_API_VERSION, WEBHOOK_EVENT_TYPE } from './webhook.js';

const ORG = 'org_4kQm9TzR2vLw8XbN1cHs7P';
const ENCOUNTER = 'enc_7Hq2LmV9xR4tNc8ZpK3wYd';
const NOTE = 'doc_2Wf8KjR5tLq9XmN3vB7cHz';
const AMBIENT = 'doc_9Tn4PxQ7mK2wLr8ZcV5hJb';

const encounter: EncounterBody = {
  encounter_id: ENCOUNTER,
  organization_id: ORG,
  encounter_type: 'ambient',
  status: 'completed',
  created_at: '2026-05-01T15:00:12.481Z',
  updated_at: '2026-05-01T15:31:47.902Z',
  date_of_service: '2026-05-01T14:30:00.000Z',
  patient: {
    patient_id: 'pat_5Rc8VnK2qW7xLm4TzH9bPd',
    first_name: 'Maren',
    last_name: 'Oakridge',
    date_of_birth: '1979-08-23',
  },
  documents: [
    {
      document_id: AMBIENT,
      schema_type: 'ambient_transcript',
      title: 'Ambient transcript',
      status: 'completed',
      workflow_variant: 'ambient',
      audio_duration_seconds: 642.35,
    },
    {
      document_id: NOTE,
      schema_type: 'document',
      title: 'Progress note',
      status: null,
      workflow_variant: null,
      audio_duration_seconds: null,
    },
  ],
};

const document: DocumentDetailBody = {
  document_id: NOTE,
  encounter_id: ENCOUNTER,
  schema_type: 'document',
  title: 'Progress note',
  status: null,
  workflow_variant: null,
  created_at: '2026-05-01T15:03:00.000Z',
  updated_at: '2026-05-01T15:31:47.902Z',
  content: {
    format: 'markdown',
    text:
      '## Subjective\nFollow-up for seasonal allergic rhinitis; congestion improved on nasal steroid.\n\n' +
      '## Assessment and plan\nAllergic rhinitis, controlled. Continue fluticasone daily; review in 6 months.',
  },
};

const transcript: TranscriptBody = {
  encounter_id: ENCOUNTER,
  document_id: AMBIENT,
  transcript: {
    provider: 'example-speech',
    audio_duration_seconds: 642.35,
    turns: [
      { speaker: 'clinician', start: 0.4, end: 4.12, text: 'Good afternoon. How has the congestion been?' },
      { speaker: 'patient', start: 4.6, end: 9.85, text: 'Much better since I started the spray.' },
    ],
  },
};

const audio: AudioLinkBody = {
  audio_url:
    'https://media.eds.example.com/media/recordings/enc_7Hq2LmV9xR4tNc8ZpK3wYd/ambient.wav' +
    '?expires=1777648200&type=audio%2Fwav&sig=5c1e0f2a9b7d4c3e8f6a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6',
  expires_at: '2026-05-01T15:10:00.000Z',
};

/** The 200 example of each success schema a route answers with. */
export const SUCCESS_EXAMPLES = {
  EncounterList: { items: [encounter], limit: 1, offset: 0, total: 238 } satisfies EncounterListBody,
  EncounterEnvelope: { encounter },
  DocumentEnvelope: { document },
  Transcript: transcript,
  AudioLink: audio,
} as const;

/** A `detail` as the service writes it, for each reason code. */
const PROBLEM_DETAILS: Record<ReasonCode, string> = {
  unsupported_filter: 'This route does not accept the query parameter "page".',
  unsupported_document_type: 'This route serves ambient_transcript documents only.',
  audio_not_available_for_document: 'This document has no recording.',
  missing_bearer: 'Send the API key as "Authorization: Bearer <API_KEY>".',
  api_keys_disabled: 'API keys are disabled for this organization.',
  test_prefix_not_allowed: 'Test keys are not accepted by this deployment.',
  malformed_token: 'The API key is not well-formed.',
  invalid_key: 'The API key is not recognised.',
  disabled_key: 'The API key is disabled.',
  revoked_key: 'The API key has been revoked.',
  expired_key: 'The API key has expired.',
  org_scope_only_required: 'Only organization-scoped API keys are accepted.',
  missing_scope: 'This route needs the scope(s): recordings:read.',
  route_not_allowed: 'Your organization is not enabled for the documents routes.',
  organization_not_allowlisted: 'Your organization is not enabled for the external API.',
  cross_organization_denied: 'This encounter is not available to your organization.',
  demo_training_denied: 'Demo and training encounters are not available through the API.',
  encounter_not_found: 'No encounter with this ID exists for your organization.',
  document_not_found: 'No document with this ID exists in this encounter.',
  transcript_not_found: 'This document has no finalized transcript.',
  audio_not_found: 'The recording for this document is no longer in storage.',
  route_not_found: 'No route matches this path.',
  method_not_allowed: 'This API is read-only: use GET or HEAD.',
  invalid_limit: 'limit must be a whole number from 1 to 100, given once.',
  invalid_offset: 'offset must be a whole number from 0 to 10000, given once.',
  invalid_sort: 'sort_order must be asc or desc, given once.',
  invalid_query: 'start_at must be earlier than end_at.',
  digest_key_unavailable: 'Key verification is temporarily unavailable.',
  audio_storage_unavailable: 'Audio storage is temporarily unavailable.',
  rate_limited: 'Too many requests for this API key. Retry after 2 s.',
  audit_unavailable:
    'The audit log cannot record this request right now, so nothing was sent; retry shortly.',
  service_unavailable: 'The service is temporarily unavailable; retry shortly.',
  link_invalid: 'The link is not valid; request a new one from the API.',
  link_expired: 'The link has expired; request a new one from the API.',
  range_not_satisfiable: 'The requested range is outside the recording.',
};

/** The parameter each example's `field` names (the rest have none). */
const PROBLEM_FIELDS: Partial<Record<ReasonCode, string>> = {
  unsupported_filter: 'page',
  invalid_limit: 'limit',
  invalid_offset: 'offset',
  invalid_sort: 'sort_order',
};

export function problemExample(code: ReasonCode): ProblemBody {
  const error = new ApiError(code, PROBLEM_DETAILS[code], undefined, PROBLEM_FIELDS[code] ?? null);
  return problemBody(error, 'req_3Gx7NqL2vT9kRm5WcZ8pHb');
}

export const WEBHOOK_EVENT_EXAMPLE: WebhookEventBody = {
  id: 'evt_8Mv3QzT6kN1xWr4LpC9hJf',
  type: WEBHOOK_EVENT_TYPE,
  api_version: WEBHOOK_API_VERSION,
  occurred_at: '2026-05-01T15:31:47.902Z',
  organization_id: ORG,
  resources: { encounter_id: ENCOUNTER, document_id: AMBIENT },
};

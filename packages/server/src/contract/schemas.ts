/**
 * The contract's resource tables as JSON Schema (TypeBox). These schemas serialize every
 * response (so no field outside the contract can leak out), and the OpenAPI document is
 * generated from them. Nullable fields are `anyOf [T, null]` and always present.
 */
import Type, { type Static, type TSchema } from 'typebox';
import { LIST_QUERY, type SortOrder } from './listQuery.js';
import { REASON_CODES, type ReasonCode } from './reasons.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const strict = { additionalProperties: false } as const;

const Id = (description: string) => Type.String({ description });
const DateTime = (description: string) =>
  Type.String({ format: 'date-time', description: `${description} (UTC, milliseconds, Z).` });

export const Patient = Type.Object(
  {
    patient_id: Id('Opaque patient ID.'),
    first_name: Type.String(),
    last_name: Type.String(),
    date_of_birth: Type.String({ format: 'date', description: 'Calendar date, YYYY-MM-DD.' }),
  },
  { ...strict },
);

export const DocumentSummary = Type.Object(
  {
    document_id: Id('Opaque document ID.'),
    schema_type: Type.String({ description: 'document or ambient_transcript.' }),
    title: Type.String(),
    status: Nullable(Type.String({ description: 'null for document; e.g. completed.' })),
    workflow_variant: Nullable(Type.String({ description: 'null for document; e.g. ambient.' })),
    audio_duration_seconds: Nullable(Type.Number({ description: 'Seconds, fractional; null for document.' })),
  },
  { ...strict },
);

export const Encounter = Type.Object(
  {
    encounter_id: Id('Opaque encounter ID.'),
    organization_id: Id('Opaque organization ID.'),
    encounter_type: Type.String({ description: 'e.g. ambient, clinical_documentation.' }),
    status: Type.String({ description: 'e.g. completed.' }),
    created_at: DateTime('Creation time'),
    updated_at: DateTime('Last update time'),
    date_of_service: DateTime('Date of service'),
    patient: Patient,
    documents: Type.Array(DocumentSummary),
  },
  { ...strict },
);

export const EncounterList = Type.Object(
  {
    items: Type.Array(Encounter),
    limit: Type.Integer({ description: 'The limit applied.' }),
    offset: Type.Integer({ description: 'The offset applied.' }),
    total: Type.Integer({ description: 'Number of matching encounters.' }),
  },
  { ...strict },
);

export const EncounterEnvelope = Type.Object({ encounter: Encounter }, { ...strict });

export const DocumentContent = Type.Object(
  {
    format: Type.String({ description: 'markdown' }),
    text: Type.String({ description: 'Clinical markdown.' }),
  },
  { ...strict },
);

export const DocumentDetail = Type.Object(
  {
    document_id: Id('Opaque document ID.'),
    encounter_id: Id('Opaque encounter ID.'),
    schema_type: Type.String({ description: 'document or ambient_transcript.' }),
    title: Type.String(),
    status: Nullable(Type.String()),
    workflow_variant: Nullable(Type.String()),
    created_at: DateTime('Creation time'),
    updated_at: DateTime('Last update time'),
    content: Type.Optional(DocumentContent),
  },
  {
    ...strict,
    description: 'content is present for schema_type document and absent for ambient_transcript.',
  },
);

export const DocumentEnvelope = Type.Object({ document: DocumentDetail }, { ...strict });

export const TranscriptTurn = Type.Object(
  {
    speaker: Type.String({ description: 'e.g. clinician, patient.' }),
    start: Type.Number({ description: 'Seconds from the start of the audio.' }),
    end: Type.Number({ description: 'Seconds from the start of the audio.' }),
    text: Type.String(),
  },
  { ...strict },
);

export const Transcript = Type.Object(
  {
    encounter_id: Type.String(),
    document_id: Type.String(),
    transcript: Type.Object(
      {
        provider: Type.String({ description: 'Name of the speech provider.' }),
        audio_duration_seconds: Type.Number(),
        turns: Type.Array(TranscriptTurn),
      },
      strict,
    ),
  },
  { ...strict },
);

export const AudioLink = Type.Object(
  {
    audio_url: Type.String({
      format: 'uri',
      description:
        'Temporary signed link. Not a durable identifier; do not log; do not use after expires_at.',
    }),
    expires_at: DateTime('The link must not be used after this time'),
  },
  { ...strict },
);

export const Problem = Type.Object(
  {
    type: Type.String({ description: 'URI reference identifying the problem type.' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String({ description: 'A sentence for people; never a token, secret or link.' }),
    reason_code: Type.Unsafe<ReasonCode>({
      type: 'string',
      enum: REASON_CODES,
      description: 'What went wrong, for code to branch on (the table at /docs/problems).',
    }),
    request_id: Type.String(),
    message: Type.String({ description: 'The same sentence as `detail`.' }),
    field: Nullable(
      Type.String({
        description:
          'The query parameter that decided the code (`limit`, `offset`, `sort_order`, `start_at`, ' +
          '`end_at`; for `unsupported_filter` the first unsupported key as sent); null when no ' +
          'single parameter applies.',
      }),
    ),
  },
  {
    ...strict,
    description:
      'RFC 9457 problem details, with `message` and `field` as extension members. The media host ' +
      'that serves signed audio links answers with the same body.',
  },
);

export const ListEncountersQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: LIST_QUERY.limit.min,
        maximum: LIST_QUERY.limit.max,
        default: LIST_QUERY.limit.default,
        description: 'Canonical decimal integer.',
      }),
    ),
    offset: Type.Optional(
      Type.Integer({
        minimum: LIST_QUERY.offset.min,
        maximum: LIST_QUERY.offset.max,
        default: LIST_QUERY.offset.default,
        description: 'Canonical decimal integer.',
      }),
    ),
    // A plain string enum (not a union of literals), so the reference shows the choices.
    sort_order: Type.Optional(
      Type.Unsafe<SortOrder>({
        type: 'string',
        enum: [...LIST_QUERY.sortOrders],
        default: LIST_QUERY.defaultSort,
        description: 'Order by created_at, ties by encounter_id.',
      }),
    ),
    start_at: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'Timezone-aware RFC 3339 datetime; inclusive lower bound on created_at.',
      }),
    ),
    end_at: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'Timezone-aware RFC 3339 datetime; exclusive upper bound on created_at.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const EncounterParams = Type.Object({
  encounter_id: Type.String({ description: 'Opaque encounter ID.' }),
});
export const DocumentParams = Type.Object({
  encounter_id: Type.String({ description: 'Opaque encounter ID.' }),
  document_id: Type.String({ description: 'Opaque document ID.' }),
});

/** Webhook event body (contract, "Webhook event body"): exactly these keys, nothing else. */
export const WebhookEvent = Type.Object(
  {
    id: Type.String(),
    type: Type.Literal('recording.transcript_ready'),
    api_version: Type.String(),
    occurred_at: Type.String({ format: 'date-time' }),
    organization_id: Type.String(),
    resources: Type.Object({ encounter_id: Type.String(), document_id: Type.String() }, strict),
  },
  { ...strict },
);

/**
 * Named schemas, registered once with Fastify (`$id` = the name) so responses and the OpenAPI
 * document share them as components. Nested schemas are inlined where used.
 */
export const NAMED_SCHEMAS = {
  Patient,
  DocumentSummary,
  Encounter,
  EncounterList,
  EncounterEnvelope,
  DocumentContent,
  DocumentDetail,
  DocumentEnvelope,
  TranscriptTurn,
  Transcript,
  AudioLink,
  Problem,
  WebhookEvent,
} as const;
export type SchemaName = keyof typeof NAMED_SCHEMAS;

export type PatientBody = Static<typeof Patient>;
export type DocumentSummaryBody = Static<typeof DocumentSummary>;
export type EncounterBody = Static<typeof Encounter>;
export type EncounterListBody = Static<typeof EncounterList>;
export type DocumentDetailBody = Static<typeof DocumentDetail>;
export type TranscriptBody = Static<typeof Transcript>;
export type AudioLinkBody = Static<typeof AudioLink>;
export type ProblemBody = Static<typeof Problem>;
export type WebhookEventBody = Static<typeof WebhookEvent>;

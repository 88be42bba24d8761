/**
 * The contract's resource tables as JSON Schema (TypeBox). These schemas serialize every
 * response (so no field outside the contract can leak out), and the OpenAPI document is
 * generated from them. Nullable fields are `anyOf [T, null]` and always present. A schema used
 * inside another is referenced by name (`$ref`), so the document's components are the classes a
 * client generator makes, and closed sets of values are enums.
 */
import Type, { type Static, type TSchema } from 'typebox';
import { REASON_CODES, type ReasonCode } from './reasons.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const strict = { additionalProperties: false } as const;

/** A use of a named schema (registered as `$id` = its name), typed as that schema. */
const Ref = <T extends TSchema>(name: string, _schema: T) => Type.Unsafe<Static<T>>({ $ref: `${name}#` });

/** A closed set of strings: an enum in the document and a union type in TypeScript. */
const Enum = <T extends string>(values: readonly T[], description?: string) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...(description ? { description } : {}) });

/** The schema types the routes serve (others are stored, never listed, and refused by ID). */
export const SCHEMA_TYPES = ['document', 'ambient_transcript'] as const;
export type SchemaType = (typeof SCHEMA_TYPES)[number];

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
    schema_type: Enum(SCHEMA_TYPES),
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
    patient: Ref('Patient', Patient),
    documents: Type.Array(Ref('DocumentSummary', DocumentSummary)),
  },
  { ...strict },
);

export const EncounterList = Type.Object(
  {
    items: Type.Array(Ref('Encounter', Encounter)),
    limit: Type.Integer({ description: 'The limit applied.' }),
    offset: Type.Integer({ description: 'The offset applied.' }),
    total: Type.Integer({ description: 'Number of matching encounters.' }),
  },
  { ...strict },
);

export const EncounterEnvelope = Type.Object({ encounter: Ref('Encounter', Encounter) }, { ...strict });

export const DocumentContent = Type.Object(
  {
    format: Enum(['markdown']),
    text: Type.String({ description: 'Clinical markdown.' }),
  },
  { ...strict },
);

const documentDetailFields = {
  document_id: Id('Opaque document ID.'),
  encounter_id: Id('Opaque encounter ID.'),
  title: Type.String(),
  status: Nullable(Type.String()),
  workflow_variant: Nullable(Type.String()),
  created_at: DateTime('Creation time'),
  updated_at: DateTime('Last update time'),
};

/** A `document`: clinical markdown in `content`. */
export const NoteDetail = Type.Object(
  {
    ...documentDetailFields,
    schema_type: Enum(['document']),
    content: Ref('DocumentContent', DocumentContent),
  },
  { ...strict, description: 'A document of schema_type document, with its markdown content.' },
);

/** An `ambient_transcript`: metadata only, no `content` (its turns come from the transcript route). */
export const AmbientTranscriptDetail = Type.Object(
  { ...documentDetailFields, schema_type: Enum(['ambient_transcript']) },
  {
    ...strict,
    description: 'A document of schema_type ambient_transcript: metadata only, no content field.',
  },
);

/** One of the two, told apart by `schema_type`. */
export const DocumentDetail = Type.Unsafe<Static<typeof NoteDetail> | Static<typeof AmbientTranscriptDetail>>(
  {
    oneOf: [Ref('NoteDetail', NoteDetail), Ref('AmbientTranscriptDetail', AmbientTranscriptDetail)],
    discriminator: {
      propertyName: 'schema_type',
      mapping: {
        document: '#/components/schemas/NoteDetail',
        ambient_transcript: '#/components/schemas/AmbientTranscriptDetail',
      },
    },
    description: 'content is present for schema_type document and absent for ambient_transcript.',
  },
);

export const DocumentEnvelope = Type.Object(
  { document: Ref('DocumentDetail', DocumentDetail) },
  { ...strict },
);

export const TranscriptTurn = Type.Object(
  {
    speaker: Type.String({ description: 'e.g. clinician, patient.' }),
    start: Type.Number({ description: 'Seconds from the start of the audio.' }),
    end: Type.Number({ description: 'Seconds from the start of the audio.' }),
    text: Type.String(),
  },
  { ...strict },
);

export const TranscriptContent = Type.Object(
  {
    provider: Type.String({ description: 'Name of the speech provider.' }),
    audio_duration_seconds: Type.Number(),
    turns: Type.Array(Ref('TranscriptTurn', TranscriptTurn)),
  },
  { ...strict },
);

export const Transcript = Type.Object(
  {
    encounter_id: Type.String(),
    document_id: Type.String(),
    transcript: Ref('TranscriptContent', TranscriptContent),
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

export const EncounterParams = Type.Object({
  encounter_id: Type.String({ description: 'Opaque encounter ID.' }),
});
export const DocumentParams = Type.Object({
  encounter_id: Type.String({ description: 'Opaque encounter ID.' }),
  document_id: Type.String({ description: 'Opaque document ID.' }),
});

/** What a webhook event points at. */
export const WebhookEventResources = Type.Object(
  { encounter_id: Type.String(), document_id: Type.String() },
  { ...strict },
);

/** Webhook event body (contract, "Webhook event body"): exactly these keys, nothing else. */
export const WebhookEvent = Type.Object(
  {
    id: Type.String(),
    type: Enum(['recording.transcript_ready']),
    api_version: Type.String(),
    occurred_at: Type.String({ format: 'date-time' }),
    organization_id: Type.String(),
    resources: Ref('WebhookEventResources', WebhookEventResources),
  },
  { ...strict },
);

/**
 * Named schemas, registered once with Fastify (`$id` = the name) so responses and the OpenAPI
 * document share them as components. A schema used inside another is referenced by its name.
 */
export const NAMED_SCHEMAS = {
  Patient,
  DocumentSummary,
  Encounter,
  EncounterList,
  EncounterEnvelope,
  DocumentContent,
  NoteDetail,
  AmbientTranscriptDetail,
  DocumentDetail,
  DocumentEnvelope,
  TranscriptTurn,
  TranscriptContent,
  Transcript,
  AudioLink,
  Problem,
  WebhookEventResources,
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

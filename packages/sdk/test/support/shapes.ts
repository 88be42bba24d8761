/**
 * A runtime description of the SDK's response types, checked against those types by the
 * compiler: `ShapeOf<T>` demands every key of T, with `nullable`/`optional` literals that must
 * agree with T's declaration. `typecheck` ties this map to src/types.ts; the drift test ties it
 * to the served OpenAPI document. Changing either side without the other fails one of them.
 */
import type {
  AudioLinkBody,
  DocumentContent,
  DocumentDetail,
  DocumentSummary,
  Encounter,
  EncounterList,
  Patient,
  Problem,
  Transcript,
  TranscriptTurn,
  WebhookEvent,
} from '../../src/index.js';

type KindOf<V> = V extends string
  ? 'string'
  : V extends number
    ? 'number' | 'integer'
    : V extends boolean
      ? 'boolean'
      : V extends readonly unknown[]
        ? 'array'
        : 'object';

type Nested<V> = [V] extends [readonly (infer I)[]]
  ? { items: FieldSpec<I, false> }
  : [V] extends [string | number | boolean]
    ? { items?: never; shape?: never }
    : { shape: ShapeOf<V> };

export type FieldSpec<V, Optional extends boolean> = {
  kind: KindOf<Exclude<V, null | undefined>>;
  nullable: null extends V ? true : false;
  optional: Optional;
} & Nested<Exclude<V, null | undefined>>;

// biome-ignore lint/complexity/noBannedTypes: `{}` is the point: an optional key makes Pick<T, K> accept {}.
type IsOptional<T, K extends keyof T> = {} extends Pick<T, K> ? true : false;

export type ShapeOf<T> = { [K in keyof T]-?: FieldSpec<Exclude<T[K], undefined>, IsOptional<T, K>> };

/** A field as the comparison sees it (the compile-time detail erased). */
export interface Field {
  kind: string;
  nullable: boolean;
  optional: boolean;
  items?: Field;
  shape?: Shape;
}
export type Shape = Record<string, Field>;

const str = { kind: 'string', nullable: false, optional: false } as const;
const strOrNull = { kind: 'string', nullable: true, optional: false } as const;
const num = { kind: 'number', nullable: false, optional: false } as const;
const int = { kind: 'integer', nullable: false, optional: false } as const;
/** A required, non-null object field of the given shape. */
const objectOf = <S>(shape: S) => ({ kind: 'object', nullable: false, optional: false, shape }) as const;
/** A required, non-null list whose items are objects of the given shape. */
const listOf = <S>(shape: S) =>
  ({ kind: 'array', nullable: false, optional: false, items: objectOf(shape) }) as const;

const patient: ShapeOf<Patient> = { patient_id: str, first_name: str, last_name: str, date_of_birth: str };

const documentSummary: ShapeOf<DocumentSummary> = {
  document_id: str,
  schema_type: str,
  title: str,
  status: strOrNull,
  workflow_variant: strOrNull,
  audio_duration_seconds: { kind: 'number', nullable: true, optional: false },
};

const encounter: ShapeOf<Encounter> = {
  encounter_id: str,
  organization_id: str,
  encounter_type: str,
  status: str,
  created_at: str,
  updated_at: str,
  date_of_service: str,
  patient: objectOf(patient),
  documents: listOf(documentSummary),
};

const encounterList: ShapeOf<EncounterList> = {
  items: listOf(encounter),
  limit: int,
  offset: int,
  total: int,
};

const documentContent: ShapeOf<DocumentContent> = { format: str, text: str };

const documentDetail: ShapeOf<DocumentDetail> = {
  document_id: str,
  encounter_id: str,
  schema_type: str,
  title: str,
  status: strOrNull,
  workflow_variant: strOrNull,
  created_at: str,
  updated_at: str,
  content: { ...objectOf(documentContent), optional: true },
};

/** The served document detail's two variants, told apart by schema_type. */
const { content, ...documentMetadata } = documentDetail;
const noteDetail: ShapeOf<Required<DocumentDetail>> = {
  ...documentMetadata,
  content: { ...content, optional: false },
};
const ambientTranscriptDetail: ShapeOf<Omit<DocumentDetail, 'content'>> = documentMetadata;

const transcriptTurn: ShapeOf<TranscriptTurn> = { speaker: str, start: num, end: num, text: str };

const transcriptContent: ShapeOf<Transcript['transcript']> = {
  provider: str,
  audio_duration_seconds: num,
  turns: listOf(transcriptTurn),
};

const transcript: ShapeOf<Transcript> = {
  encounter_id: str,
  document_id: str,
  transcript: objectOf(transcriptContent),
};

const audioLink: ShapeOf<AudioLinkBody> = { audio_url: str, expires_at: str };

const problem: ShapeOf<Problem> = {
  type: str,
  title: str,
  status: int,
  detail: str,
  reason_code: str,
  request_id: str,
  message: str,
  field: strOrNull,
};

const webhookEventResources: ShapeOf<WebhookEvent['resources']> = { encounter_id: str, document_id: str };

const webhookEvent: ShapeOf<WebhookEvent> = {
  id: str,
  type: str,
  api_version: str,
  occurred_at: str,
  organization_id: str,
  resources: objectOf(webhookEventResources),
};

/** SDK type → OpenAPI component of the same name. Every served component must be listed. */
export const SDK_SHAPES: Record<string, Shape> = {
  Patient: patient,
  DocumentSummary: documentSummary,
  Encounter: encounter,
  EncounterList: encounterList,
  EncounterEnvelope: { encounter: objectOf(encounter) },
  DocumentContent: documentContent,
  NoteDetail: noteDetail,
  AmbientTranscriptDetail: ambientTranscriptDetail,
  DocumentDetail: documentDetail,
  DocumentEnvelope: { document: objectOf(documentDetail) },
  TranscriptTurn: transcriptTurn,
  TranscriptContent: transcriptContent,
  Transcript: transcript,
  AudioLink: audioLink,
  Problem: problem,
  WebhookEventResources: webhookEventResources,
  WebhookEvent: webhookEvent,
};

/** Which shape each client method parses from each route's 200 answer. */
export const ROUTE_SHAPES: Record<string, string> = {
  '/external/v1/encounters': 'EncounterList',
  '/external/v1/encounters/{encounter_id}': 'EncounterEnvelope',
  '/external/v1/encounters/{encounter_id}/documents/{document_id}': 'DocumentEnvelope',
  '/external/v1/encounters/{encounter_id}/documents/{document_id}/transcript': 'Transcript',
  '/external/v1/encounters/{encounter_id}/documents/{document_id}/audio': 'AudioLink',
};

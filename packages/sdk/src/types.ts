/**
 * Response shapes of the REST API v1 and the webhook event body, exactly as the contract's
 * resource tables give them. Nullable fields are always present (`T | null`); the only optional
 * field is `DocumentDetail.content`. A test compares these against the served OpenAPI document.
 */

export interface Patient {
  patient_id: string;
  first_name: string;
  last_name: string;
  /** Calendar date, YYYY-MM-DD. */
  date_of_birth: string;
}

/** Values seen: `document`, `ambient_transcript`. Kept open: the contract does not close the set. */
export type SchemaType = 'document' | 'ambient_transcript' | (string & {});

export interface DocumentSummary {
  document_id: string;
  schema_type: SchemaType;
  title: string;
  /** null for schema_type document; `completed` seen for ambient_transcript. */
  status: string | null;
  /** null for schema_type document; `ambient` seen for ambient_transcript. */
  workflow_variant: string | null;
  /** Seconds, fractional; null for schema_type document. */
  audio_duration_seconds: number | null;
}

export interface Encounter {
  encounter_id: string;
  organization_id: string;
  /** Values seen: `ambient`, `clinical_documentation`; the full set is not closed. */
  encounter_type: string;
  /** Value seen: `completed`; the full set is not closed. */
  status: string;
  /** ISO 8601, UTC, milliseconds (`YYYY-MM-DDTHH:MM:SS.sssZ`). */
  created_at: string;
  updated_at: string;
  date_of_service: string;
  patient: Patient;
  documents: DocumentSummary[];
}

export interface EncounterList {
  items: Encounter[];
  /** The limit applied. */
  limit: number;
  /** The offset applied. */
  offset: number;
  /** Number of encounters matching the query (not a snapshot: it can change between pages). */
  total: number;
}

export interface DocumentContent {
  /** `markdown`. */
  format: string;
  /** Clinical markdown. */
  text: string;
}

export interface DocumentDetail {
  document_id: string;
  encounter_id: string;
  schema_type: SchemaType;
  title: string;
  status: string | null;
  workflow_variant: string | null;
  created_at: string;
  updated_at: string;
  /** Present for schema_type document; absent for ambient_transcript (metadata only). */
  content?: DocumentContent;
}

export interface TranscriptTurn {
  /** Values seen: `clinician`, `patient`; the full set is not closed. */
  speaker: string;
  /** Seconds from the start of the audio. */
  start: number;
  end: number;
  text: string;
}

export interface Transcript {
  encounter_id: string;
  document_id: string;
  transcript: {
    /** Name of the speech provider. */
    provider: string;
    audio_duration_seconds: number;
    turns: TranscriptTurn[];
  };
}

/** The audio route's body as sent. The client wraps it in the `AudioLink` class. */
export interface AudioLinkBody {
  audio_url: string;
  expires_at: string;
}

/** RFC 9457 problem details, the body of every error answer. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  reason_code: string;
  request_id: string;
  /** The same sentence as `detail`. */
  message: string;
  /**
   * The query parameter that decided the code (`limit`, `offset`, `sort_order`, `start_at`,
   * `end_at`; for `unsupported_filter` the first unsupported key as sent), or null.
   */
  field: string | null;
}

export type SortOrder = 'asc' | 'desc';

/** Query of route 1. Dates may be given as `Date` or as RFC 3339 strings with an offset. */
export interface ListEncountersParams {
  /** 1 to 100, default 50. */
  limit?: number;
  /** 0 to 10,000, default 0. Use `iterateEncounters` to go past it. */
  offset?: number;
  /** Order by created_at (ties by encounter_id); default `desc`. */
  sort_order?: SortOrder;
  /** Inclusive lower bound on created_at. */
  start_at?: string | Date;
  /** Exclusive upper bound on created_at. */
  end_at?: string | Date;
}

/** The webhook version this SDK is written for. */
export const WEBHOOK_API_VERSION = '2026-05-01';
export const WEBHOOK_EVENT_TYPE = 'recording.transcript_ready';

/** Body of a `recording.transcript_ready` delivery: a thin pointer, fetch the data through REST. */
export interface WebhookEvent {
  id: string;
  /** Only `recording.transcript_ready` exists today; acknowledge and ignore any other. */
  type: typeof WEBHOOK_EVENT_TYPE | (string & {});
  /** Date-like webhook version; equals the `Eds-Webhook-Version` header. */
  api_version: string;
  /** When it happened; may differ from the signing timestamp. */
  occurred_at: string;
  organization_id: string;
  resources: {
    encounter_id: string;
    document_id: string;
  };
}

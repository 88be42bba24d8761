/**
 * Table types for Kysely. One logical schema for SQLite and PostgreSQL: times are integer epoch
 * milliseconds (sortable, exact, same in both), flags are 0/1 integers, lists are JSON text.
 */
import type { Generated, Insertable, Selectable } from 'kysely';

export type Flag = 0 | 1;

export interface OrganizationsTable {
  id: string;
  name: string;
  allowlisted: Flag;
  /** JSON array of route groups. */
  routes: string;
  api_keys_enabled: Flag;
  created_at: number;
  updated_at: number;
  /** Requests a second per key for this organization's keys; NULL: the deployment's rate. */
  rate_limit_per_key: number | null;
}

export type ApiKeyKind = 'organization' | 'user';
export type ApiKeyState = 'active' | 'disabled' | 'revoked';
export type ApiKeyEnvironment = 'live' | 'test';

export interface ApiKeysTable {
  id: string;
  organization_id: string;
  /** Hex HMAC-SHA256 of the token with the deployment's digest secret; never the token. */
  digest: string;
  environment: ApiKeyEnvironment;
  kind: ApiKeyKind;
  /** JSON array of scopes. */
  scopes: string;
  state: ApiKeyState;
  expires_at: number | null;
  created_at: number;
  updated_at: number;
  last_used_at: number | null;
  /** What minted it: `cli`, `demo`, or `webhook:<subscription id>`. */
  created_by: string;
  /** Set on a rolled key: the key that replaces it (its grace deadline is `expires_at`). */
  successor_id: string | null;
  /** Set on a successor: the key it was rolled from. */
  predecessor_id: string | null;
  /** Fingerprint of the digest secret that made `digest` (auth/digest.ts); NULL: not yet known. */
  digest_secret_id: string | null;
}

export interface PatientsTable {
  id: string;
  organization_id: string;
  first_name: string;
  last_name: string;
  date_of_birth: string;
  created_at: number;
  updated_at: number;
}

export interface EncountersTable {
  id: string;
  organization_id: string;
  patient_id: string;
  encounter_type: string;
  status: string;
  date_of_service: number;
  created_at: number;
  updated_at: number;
  demo_training: Flag;
}

export interface DocumentsTable {
  id: string;
  encounter_id: string;
  organization_id: string;
  schema_type: string;
  title: string;
  status: string | null;
  workflow_variant: string | null;
  audio_duration_seconds: number | null;
  content_format: string | null;
  content_text: string | null;
  created_at: number;
  updated_at: number;
}

export interface TranscriptsTable {
  document_id: string;
  finalized: Flag;
  provider: string | null;
  audio_duration_seconds: number | null;
  /** JSON array of {speaker, start, end, text}, in order. */
  turns: string;
  finalized_at: number | null;
}

export interface RecordingsTable {
  document_id: string;
  /** Key of the object in the media store. */
  object_key: string;
  content_type: string;
  byte_size: number | null;
}

/** Per-day counts of listable (non-demo) encounters; keeps `total` O(days), not O(rows). */
export interface EncounterDayCountsTable {
  organization_id: string;
  /** floor(created_at / 86,400,000). */
  day: number;
  count: number;
  /** The organization's listable encounters on its earlier days: the days' running total. */
  earlier: Generated<number>;
}

/** The same counts by hour, which place a deep list offset within its day (migration 013). */
export interface EncounterHourCountsTable {
  organization_id: string;
  /** floor(created_at / 3,600,000). */
  hour: number;
  count: number;
}

/** Per kind of change, a counter SQLite writers advance on commit for others to poll (migration 015). */
export interface ChangeSignalsTable {
  channel: string;
  version: number;
}

/** Each organization's listable encounters: the sum of its day counts, kept beside them. */
export interface EncounterCountsTable {
  organization_id: string;
  count: number;
}

/**
 * The read model (migration 005): each encounter's summary exactly as the API sends it, kept by
 * the writes of clinical data in their own transaction. Holds every encounter, demo/training and
 * all, so the 403/404 checks read only this table.
 */
export interface EncounterReadsTable {
  encounter_id: string;
  organization_id: string;
  demo_training: Flag;
  created_at: number;
  patient_id: string;
  /** The contract's Encounter object, UTF-8 JSON: a list item, and the inside of the detail. */
  summary: string;
  /** Strong entity tag of `summary` (quoted), computed when it was written. */
  etag: string;
}

/** Each document's detail and, for a finalized transcript, its transcript answer, as sent. */
export interface DocumentReadsTable {
  document_id: string;
  encounter_id: string;
  organization_id: string;
  schema_type: string;
  /** The contract's Document object; null for schema types the API does not show. */
  detail: string | null;
  detail_etag: string | null;
  /** The whole transcript route body; null unless an ambient transcript is finalized. */
  transcript: string | null;
  transcript_etag: string | null;
}

export interface AuditLogTable {
  id: Generated<number>;
  at: number;
  request_id: string;
  organization_id: string | null;
  key_id: string | null;
  method: string;
  route: string;
  encounter_id: string | null;
  document_id: string | null;
  status: number;
  reason_code: string | null;
  duration_ms: number;
  /** How many requests the row stands for: 1, or more for unidentified refusals (see AuditQueue). */
  request_count: Generated<number>;
  /** The set of patients whose data the answer carried, if any (see migration 009). */
  patient_set: string | null;
}

/** A distinct set of patients that audited answers carried, named by its members' digest. */
export interface AuditPatientSetsTable {
  /** SQLite only (migration 010): the rowid of the set's row in `audit_set_tokens`. */
  id: Generated<number>;
  set_id: string;
  /** The members as a JSON array of patient IDs. */
  members: string;
  /** The newest record naming the set, to within SET_LAST_USED_STEP_MS: retention keeps it. */
  last_used_at: number;
}

export interface WebhookEventsTable {
  id: string;
  organization_id: string;
  type: string;
  api_version: string;
  encounter_id: string;
  document_id: string;
  occurred_at: number;
  /** The exact body bytes sent on every attempt (UTF-8 JSON). */
  body: string;
  created_at: number;
}

export type CorrelationStatus = 'confirmed' | 'not_confirmed_runtime_blocked';

export interface WebhookSubscriptionsTable {
  id: string;
  organization_id: string;
  /** The receiver's endpoint URL; shown to operators, never logged with credentials. */
  url: string;
  /** The signing secret, AES-256-GCM encrypted (webhooks/secrets.ts); never the plain secret. */
  secret_ciphertext: string;
  enabled: Flag;
  /** Increases on every change of endpoint or settings. */
  revision: number;
  /** The revision the last activation approved; delivery needs it to equal `revision`. */
  active_revision: number | null;
  activation_id: string | null;
  correlation_status: CorrelationStatus;
  correlation_updated_at: number;
  created_at: number;
  updated_at: number;
  /** During a secret rotation's grace: the former secret, encrypted like `secret_ciphertext`. */
  previous_secret_ciphertext: string | null;
  /** From this time `secret_ciphertext` signs; before it, `previous_secret_ciphertext`. */
  secret_switch_at: number | null;
  /** Since when every attempt to the receiver has failed; NULL once one succeeds. */
  failing_since: number | null;
  /** When delivery was paused for failing too long; NULL while it is not paused. */
  paused_at: number | null;
  /** Why it was paused, for the operator (classes and codes, never URLs or bodies). */
  pause_reason: string | null;
}

/** One signing-secret rotation: who, when, and when the new secret starts signing. */
export interface WebhookSecretRotationsTable {
  id: string;
  subscription_id: string;
  rotated_by: string;
  rotated_at: number;
  grace_seconds: number;
  switch_at: number;
}

/** One activation: readiness and provenance, recorded atomically with the active revision. */
export interface WebhookActivationsTable {
  id: string;
  subscription_id: string;
  revision: number;
  /** JSON array of follow-up route names. */
  approved_routes: string;
  /** JSON array of the minted key's scopes. */
  scopes: string;
  /** JSON object: the readiness checklist as confirmed at activation. */
  readiness: string;
  activated_by: string;
  reference: string;
  activated_at: number;
  api_key_id: string;
  /** When readiness was revoked (revoke-readiness), if it was. */
  revoked_at: number | null;
}

export type DeliveryStatus = 'pending' | 'sending' | 'succeeded' | 'failed' | 'cancelled';

export interface WebhookDeliveriesTable {
  /** The stable `Delivery-Id` of every attempt of this event to this endpoint. */
  id: string;
  event_id: string;
  subscription_id: string;
  organization_id: string;
  status: DeliveryStatus;
  /** pending: when the next attempt is due; sending: when the lease expires (reclaimable). */
  due_at: number;
  /** Attempts ever started (numbers attempts; never reset). */
  attempt_count: number;
  /** Attempts in the current retry round (reset by redeliver/recover); drives the schedule. */
  round_attempts: number;
  lease_token: string | null;
  lease_expires_at: number | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
}

export type AttemptOutcome = 'succeeded' | 'retry' | 'failed' | 'cancelled' | 'superseded';

export interface WebhookAttemptsTable {
  id: string;
  delivery_id: string;
  attempt_number: number;
  started_at: number;
  duration_ms: number;
  status_code: number | null;
  /** A class such as `timeout` or `connection_refused`; never a body or a message with data. */
  error_class: string | null;
  outcome: AttemptOutcome;
}

export interface Database {
  organizations: OrganizationsTable;
  api_keys: ApiKeysTable;
  patients: PatientsTable;
  encounters: EncountersTable;
  documents: DocumentsTable;
  transcripts: TranscriptsTable;
  recordings: RecordingsTable;
  encounter_day_counts: EncounterDayCountsTable;
  encounter_hour_counts: EncounterHourCountsTable;
  encounter_counts: EncounterCountsTable;
  encounter_reads: EncounterReadsTable;
  document_reads: DocumentReadsTable;
  audit_log: AuditLogTable;
  audit_patient_sets: AuditPatientSetsTable;
  webhook_events: WebhookEventsTable;
  webhook_subscriptions: WebhookSubscriptionsTable;
  webhook_activations: WebhookActivationsTable;
  webhook_secret_rotations: WebhookSecretRotationsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  change_signals: ChangeSignalsTable;
}

export type OrganizationRow = Selectable<OrganizationsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type PatientRow = Selectable<PatientsTable>;
export type EncounterRow = Selectable<EncountersTable>;
export type DocumentRow = Selectable<DocumentsTable>;
export type TranscriptRow = Selectable<TranscriptsTable>;
export type RecordingRow = Selectable<RecordingsTable>;
export type AuditInsert = Insertable<AuditLogTable>;
export type WebhookEventRow = Selectable<WebhookEventsTable>;
export type WebhookSubscriptionRow = Selectable<WebhookSubscriptionsTable>;
export type WebhookActivationRow = Selectable<WebhookActivationsTable>;
export type WebhookSecretRotationRow = Selectable<WebhookSecretRotationsTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
export type WebhookAttemptRow = Selectable<WebhookAttemptsTable>;

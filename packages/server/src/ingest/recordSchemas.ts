/**
 * The import format's records as TypeBox schemas, one per record kind (operator-interface.md;
 * docs/import.md). A record's schema names the fields it may have (any other is refused), which
 * are required, and what each must be; `expected` is how a refusal describes a good value.
 * Fields marked `byRule` (nested objects, and what depends on another field) are checked by
 * records.ts, against their own schemas where they have one: which of them a document may have
 * depends on its schema_type.
 */
import Type, { type TObject, type TSchema } from 'typebox';
import { ROUTE_GROUPS } from '../contract/routes.js';

export const MAX_ID_LENGTH = 255;

interface FieldKeywords {
  /** Completes "NAME must be …" in a refusal. */
  expected: string;
  /** Checked by records.ts rather than field by field. */
  byRule?: boolean;
  /** The document schema_type that alone may have this field. */
  onlyFor?: string;
}

export type FieldSchema = TSchema & FieldKeywords & Record<string, unknown>;

const NON_BLANK = '\\S';

/** An ID: 1 to 255 UTF-16 code units, no control characters (format registered in schemaFormats.ts). */
const Id = () =>
  Type.String({
    format: 'record-id',
    expected: `an id (a string of 1 to ${MAX_ID_LENGTH} characters, no control characters)`,
  });
const Str = () => Type.String({ expected: 'a string' });
const Text = () => Type.String({ pattern: NON_BLANK, expected: 'a non-empty string' });
const NullableText = () =>
  Type.Optional(
    Type.Union([Type.String({ pattern: NON_BLANK }), Type.Null()], {
      expected: 'a non-empty string or null',
    }),
  );
const Bool = (fallback: boolean) =>
  Type.Optional(Type.Boolean({ default: fallback, expected: 'true or false' }));
const Num = () => Type.Number({ minimum: 0, expected: 'a number of at least 0' });
const NullableNum = () =>
  Type.Optional(
    Type.Union([Type.Number({ minimum: 0 }), Type.Null()], { expected: 'a number of at least 0' }),
  );
const Instant = () =>
  Type.String({
    format: 'date-time',
    expected: 'an RFC 3339 date-time with an offset, e.g. 2026-05-01T14:00:00Z',
  });
const CalendarDate = () => Type.String({ format: 'date', expected: 'a calendar date YYYY-MM-DD' });
const ByRule = <T extends TSchema>(schema: T, expected: string, onlyFor?: string) =>
  ({ ...schema, byRule: true, expected, ...(onlyFor ? { onlyFor } : {}) }) as T & FieldKeywords;

export const OrganizationLine = Type.Object({
  kind: Type.Literal('organization'),
  id: Id(),
  name: Text(),
  allowlisted: Bool(false),
  routes: Type.Optional(
    Type.Array(Type.Unsafe<string>({ type: 'string', enum: [...ROUTE_GROUPS] }), {
      default: [],
      expected: `a list of route groups (${ROUTE_GROUPS.join(', ')})`,
    }),
  ),
  api_keys_enabled: Bool(true),
  created_at: Type.Optional(Instant()),
  updated_at: Type.Optional(Instant()),
});

export const PatientLine = Type.Object({
  kind: Type.Literal('patient'),
  id: Id(),
  organization_id: Id(),
  first_name: Text(),
  last_name: Text(),
  date_of_birth: CalendarDate(),
  created_at: Type.Optional(Instant()),
  updated_at: Type.Optional(Instant()),
});

export const EncounterLine = Type.Object({
  kind: Type.Literal('encounter'),
  id: Id(),
  organization_id: Id(),
  patient_id: Id(),
  encounter_type: Text(),
  status: Text(),
  date_of_service: Instant(),
  created_at: Instant(),
  updated_at: Instant(),
  demo_training: Bool(false),
});

/** `format` is a string, and then `"markdown"`: two refusals, so it is checked by a rule. */
export const ContentObject = Type.Object({ format: ByRule(Str(), 'a string'), text: Str() });

export const TurnObject = Type.Object({ speaker: Text(), start: Num(), end: Num(), text: Str() });

/** A finalized transcript is served as is, so everything the route shows must be there. */
export const FinalizedTranscript = Type.Object({
  finalized: Type.Boolean({ expected: 'true or false' }),
  provider: Text(),
  audio_duration_seconds: Num(),
  turns: ByRule(Type.Array(TurnObject), 'a list of turns'),
  finalized_at: Type.Optional(Instant()),
});

export const DraftTranscript = Type.Object({
  finalized: Type.Boolean({ expected: 'true or false' }),
  provider: NullableText(),
  audio_duration_seconds: NullableNum(),
  turns: Type.Optional(ByRule(Type.Array(TurnObject), 'a list of turns')),
  finalized_at: Type.Optional(Instant()),
});

export const AudioObject = Type.Object({
  content_type: Type.Optional(
    Type.String({ pattern: '^audio/[A-Za-z0-9.+-]+$', expected: 'an audio media type such as audio/wav' }),
  ),
  missing: Type.Optional(Type.Literal(true, { expected: 'true (or leave it out)' })),
  // Required unless `missing`, and then refused: which applies depends on `missing`.
  path: Type.Optional(ByRule(Text(), 'a non-empty string')),
});

/** Fields of every document, checked first. */
export const DocumentLine = Type.Object({
  kind: Type.Literal('document'),
  schema_type: Text(),
  id: Id(),
  encounter_id: Id(),
  title: Str(),
  status: NullableText(),
  workflow_variant: NullableText(),
  created_at: Instant(),
  updated_at: Instant(),
  content: Type.Optional(
    ByRule(
      ContentObject,
      'an object {"format":"markdown","text":...} (schema_type document has content)',
      'document',
    ),
  ),
  transcript: Type.Optional(
    ByRule(Type.Union([DraftTranscript, Type.Null()]), 'an object or null', 'ambient_transcript'),
  ),
  audio: Type.Optional(
    ByRule(
      Type.Union([AudioObject, Type.Null()]),
      'an object {"path", "content_type"}, {"missing": true} or null',
      'ambient_transcript',
    ),
  ),
  audio_duration_seconds: Type.Optional(
    ByRule(
      Type.Union([Type.Number({ minimum: 0 }), Type.Null()]),
      'a number of at least 0',
      'ambient_transcript',
    ),
  ),
});

export const LINE_SCHEMAS = {
  organization: OrganizationLine,
  patient: PatientLine,
  encounter: EncounterLine,
  document: DocumentLine,
} as const satisfies Record<string, TObject>;

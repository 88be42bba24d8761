/**
 * One import line → a typed record, or the reasons it is refused. The line is checked against its
 * kind's schema (recordSchemas.ts), then by the rules that tie fields together; only a line with
 * no problem becomes a record. Pure: no I/O, no knowledge of other lines (references are checked
 * over the whole file in validateImport.ts).
 */
import type { TObject } from 'typebox';
import { ROUTE_GROUPS, type RouteGroup } from '../contract/routes.js';
import { parseRfc3339 } from '../time.js';
import {
  checkField,
  checkFields,
  describe,
  type FieldRules,
  fieldOf,
  isObject,
  type JsonObject,
  LineProblems,
  refuseUnknownFields,
} from './fieldChecks.js';
import {
  AudioObject,
  ContentObject,
  DocumentLine,
  DraftTranscript,
  EncounterLine,
  FinalizedTranscript,
  LINE_SCHEMAS,
  MAX_ID_LENGTH,
  OrganizationLine,
  TurnObject,
} from './recordSchemas.js';

export const RECORD_KINDS = ['organization', 'patient', 'encounter', 'document'] as const;
export type RecordKind = (typeof RECORD_KINDS)[number];

export interface OrganizationRecord {
  kind: 'organization';
  id: string;
  name: string;
  allowlisted: boolean;
  routes: RouteGroup[];
  apiKeysEnabled: boolean;
  createdAt: number | undefined;
  updatedAt: number | undefined;
}

export interface PatientRecord {
  kind: 'patient';
  id: string;
  organizationId: string;
  firstName: string;
  lastName: string;
  dateOfBirth: string;
  createdAt: number | undefined;
  updatedAt: number | undefined;
}

export interface EncounterRecord {
  kind: 'encounter';
  id: string;
  organizationId: string;
  patientId: string;
  encounterType: string;
  status: string;
  dateOfService: number;
  createdAt: number;
  updatedAt: number;
  demoTraining: boolean;
}

export interface TurnRecord {
  speaker: string;
  start: number;
  end: number;
  text: string;
}

export interface TranscriptRecord {
  finalized: boolean;
  provider: string | null;
  audioDurationSeconds: number | null;
  turns: TurnRecord[];
  finalizedAt: number | undefined;
}

export type AudioRecord =
  | { readonly missing: false; readonly path: string; readonly contentType: string }
  | { readonly missing: true; readonly contentType: string };

export interface DocumentRecord {
  kind: 'document';
  id: string;
  encounterId: string;
  schemaType: string;
  title: string;
  status: string | null;
  workflowVariant: string | null;
  audioDurationSeconds: number | null;
  content: { format: string; text: string } | null;
  createdAt: number;
  updatedAt: number;
  transcript: TranscriptRecord | null;
  audio: AudioRecord | null;
}

export type ImportRecord = OrganizationRecord | PatientRecord | EncounterRecord | DocumentRecord;

/** The references a line names, as far as they are readable strings. */
export interface LineReferences {
  organizationId?: string;
  patientId?: string;
  encounterId?: string;
}

/**
 * A refused line still names what it meant to define, when it can, so references to it are not
 * reported too; and the references it makes, so a dangling one is reported in the same pass as
 * its field errors (one round of fixes per file, not two).
 */
export type ParsedLine =
  | { ok: true; record: ImportRecord }
  | { ok: false; reasons: string[]; declares?: { kind: RecordKind; id: string }; refers?: LineReferences };

const AUDIO_TYPES: Readonly<Record<string, string>> = {
  '.wav': 'audio/wav',
  '.mp3': 'audio/mpeg',
  '.m4a': 'audio/mp4',
  '.ogg': 'audio/ogg',
  '.oga': 'audio/ogg',
  '.flac': 'audio/flac',
  '.webm': 'audio/webm',
};

export function parseImportLine(text: string): ParsedLine {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, reasons: [`not valid JSON (${(error as Error).message})`] };
  }
  if (!isObject(value)) return { ok: false, reasons: ['not a JSON object'] };
  const kind = value.kind;
  if (typeof kind !== 'string' || !(RECORD_KINDS as readonly string[]).includes(kind)) {
    return {
      ok: false,
      reasons: [`unknown kind ${JSON.stringify(kind ?? null)}; expected one of ${RECORD_KINDS.join(', ')}`],
    };
  }
  const problems = new LineProblems();
  const schema = LINE_SCHEMAS[kind as RecordKind];
  refuseUnknownFields(value, [schema], '', problems);
  checkFields(schema, value, '', problems, kind === 'document' ? documentRules(value, problems) : {});
  if (problems.found.length === 0) return { ok: true, record: RECORDS[kind as RecordKind](value) };
  const refused: ParsedLine = {
    ok: false,
    reasons: problems.found,
    refers: referencesOf(kind as RecordKind, value),
  };
  if (typeof value.id === 'string' && value.id !== '')
    refused.declares = { kind: kind as RecordKind, id: value.id };
  return refused;
}

/** The reference fields of a refused line that are usable IDs (the others have their own reasons). */
function referencesOf(kind: RecordKind, value: JsonObject): LineReferences {
  const id = (field: string) => {
    const v = value[field];
    return typeof v === 'string' && v !== '' && v.length <= MAX_ID_LENGTH ? v : undefined;
  };
  const refs: LineReferences = {};
  const organizationId = kind === 'patient' || kind === 'encounter' ? id('organization_id') : undefined;
  const patientId = kind === 'encounter' ? id('patient_id') : undefined;
  const encounterId = kind === 'document' ? id('encounter_id') : undefined;
  if (organizationId !== undefined) refs.organizationId = organizationId;
  if (patientId !== undefined) refs.patientId = patientId;
  if (encounterId !== undefined) refs.encounterId = encounterId;
  return refs;
}

const isText = (value: unknown): value is string => typeof value === 'string' && value.trim() !== '';

/** A field's expected value as the schema words it. */
const expected = (schema: TObject, name: string) => fieldOf(schema, name)?.expected ?? '';

/**
 * What a document may have depends on its schema_type: a `document` has content and no status
 * or workflow_variant; an `ambient_transcript` may have a transcript, audio and a duration.
 */
function documentRules(line: JsonObject, problems: LineProblems): FieldRules {
  const schemaType = isText(line.schema_type) ? line.schema_type : '';
  const onlyFor = (name: string, check: (value: unknown) => void) => (value: unknown) => {
    const owner = fieldOf(DocumentLine, name)?.onlyFor;
    if (owner === schemaType) check(value);
    else if (value !== undefined)
      problems.fail(`${name} belongs to schema_type ${owner} only, not ${schemaType}`);
  };
  return {
    content: onlyFor('content', (value) => {
      // The contract: status and workflow_variant are null for schema_type document.
      if (isText(line.status)) problems.fail('status must be null for schema_type document');
      if (isText(line.workflow_variant))
        problems.fail('workflow_variant must be null for schema_type document');
      checkContent(value, problems);
    }),
    transcript: onlyFor('transcript', (value) => checkTranscript(value, problems)),
    audio: onlyFor('audio', (value) => checkAudio(value, problems)),
    audio_duration_seconds: onlyFor('audio_duration_seconds', (value) => {
      checkField(DocumentLine, 'audio_duration_seconds', value, '', problems);
    }),
  };
}

function checkContent(value: unknown, problems: LineProblems): void {
  if (!isObject(value)) {
    problems.bad('content', expected(DocumentLine, 'content'), value);
    return;
  }
  refuseUnknownFields(value, [ContentObject], 'content.', problems);
  checkFields(ContentObject, value, 'content.', problems, {
    format: (format) => {
      if (typeof format !== 'string')
        problems.bad('content.format', expected(ContentObject, 'format'), format);
      else if (format !== '' && format !== 'markdown') problems.fail('content.format must be "markdown"');
    },
  });
}

function checkTranscript(value: unknown, problems: LineProblems): void {
  if (value === undefined || value === null) return;
  if (!isObject(value)) {
    problems.bad('transcript', expected(DocumentLine, 'transcript'), value);
    return;
  }
  const finalized = value.finalized === true;
  const schema = finalized ? FinalizedTranscript : DraftTranscript;
  refuseUnknownFields(value, [schema], 'transcript.', problems);
  checkFields(schema, value, 'transcript.', problems, {
    turns: (turns) => {
      if (turns === undefined && !finalized) return;
      if (!Array.isArray(turns)) {
        problems.bad('transcript.turns', expected(schema, 'turns'), turns);
        return;
      }
      turns.forEach((item, index) => {
        checkTurn(item, `transcript.turns[${index}]`, problems);
      });
    },
  });
}

function checkTurn(item: unknown, label: string, problems: LineProblems): void {
  if (!isObject(item)) {
    problems.fail(`${label} must be an object {speaker, start, end, text}`);
    return;
  }
  const turn = new LineProblems();
  refuseUnknownFields(item, [TurnObject], `${label}.`, turn);
  checkFields(TurnObject, item, `${label}.`, turn);
  if (turn.found.length === 0 && (item.end as number) < (item.start as number)) {
    turn.fail(`${label}.end is before its start`);
  }
  for (const found of turn.found) problems.fail(found);
}

function checkAudio(value: unknown, problems: LineProblems): void {
  if (value === undefined || value === null) return;
  if (!isObject(value)) {
    problems.bad('audio', expected(DocumentLine, 'audio'), value);
    return;
  }
  refuseUnknownFields(value, [AudioObject], 'audio.', problems);
  checkFields(AudioObject, value, 'audio.', problems, {
    path: (path) => {
      if (value.missing !== undefined) {
        if (path !== undefined) problems.fail('audio has both missing and path');
      } else if (
        checkField(AudioObject, 'path', path, 'audio.', problems, true) &&
        audioType(path as string, value.content_type) === undefined
      ) {
        problems.fail(`audio.content_type is required for ${describe(path)}`);
      }
    },
  });
}

/** The given type, else the one the file's extension names. */
function audioType(path: string, given: unknown): string | undefined {
  if (typeof given === 'string') return given;
  const extension = /\.[A-Za-z0-9]+$/.exec(path)?.[0].toLowerCase() ?? '';
  return AUDIO_TYPES[extension];
}

/** A checked line's field, or the schema's default when the line leaves it out. */
function field<T>(schema: TObject, line: JsonObject, name: string): T {
  return (line[name] ?? fieldOf(schema, name)?.default) as T;
}

const ms = (value: unknown) => (parseRfc3339(value as string) as { ms: number }).ms;
const optionalMs = (value: unknown) => (value === undefined ? undefined : ms(value));
const orNull = <T>(value: unknown) => (value ?? null) as T | null;

/** Records from lines that passed every check. */
const RECORDS: { [K in RecordKind]: (line: JsonObject) => ImportRecord } = {
  organization: (line) => ({
    kind: 'organization',
    id: line.id as string,
    name: line.name as string,
    allowlisted: field<boolean>(OrganizationLine, line, 'allowlisted'),
    routes: ROUTE_GROUPS.filter((g) => field<string[]>(OrganizationLine, line, 'routes').includes(g)),
    apiKeysEnabled: field<boolean>(OrganizationLine, line, 'api_keys_enabled'),
    createdAt: optionalMs(line.created_at),
    updatedAt: optionalMs(line.updated_at),
  }),
  patient: (line) => ({
    kind: 'patient',
    id: line.id as string,
    organizationId: line.organization_id as string,
    firstName: line.first_name as string,
    lastName: line.last_name as string,
    dateOfBirth: line.date_of_birth as string,
    createdAt: optionalMs(line.created_at),
    updatedAt: optionalMs(line.updated_at),
  }),
  encounter: (line) => ({
    kind: 'encounter',
    id: line.id as string,
    organizationId: line.organization_id as string,
    patientId: line.patient_id as string,
    encounterType: line.encounter_type as string,
    status: line.status as string,
    dateOfService: ms(line.date_of_service),
    createdAt: ms(line.created_at),
    updatedAt: ms(line.updated_at),
    demoTraining: field<boolean>(EncounterLine, line, 'demo_training'),
  }),
  document: (line) => {
    const content = line.content as { format: string; text: string } | undefined;
    const transcript = transcriptRecord(line.transcript);
    return {
      kind: 'document',
      id: line.id as string,
      encounterId: line.encounter_id as string,
      schemaType: line.schema_type as string,
      title: line.title as string,
      status: orNull<string>(line.status),
      workflowVariant: orNull<string>(line.workflow_variant),
      audioDurationSeconds:
        orNull<number>(line.audio_duration_seconds) ?? transcript?.audioDurationSeconds ?? null,
      content: content ? { format: content.format, text: content.text } : null,
      createdAt: ms(line.created_at),
      updatedAt: ms(line.updated_at),
      transcript,
      audio: audioRecord(line.audio),
    };
  },
};

function transcriptRecord(value: unknown): TranscriptRecord | null {
  if (!isObject(value)) return null;
  const turns = (value.turns ?? []) as TurnRecord[];
  return {
    finalized: value.finalized === true,
    provider: orNull<string>(value.provider),
    audioDurationSeconds: orNull<number>(value.audio_duration_seconds),
    turns: turns.map(({ speaker, start, end, text }) => ({ speaker, start, end, text })),
    finalizedAt: optionalMs(value.finalized_at),
  };
}

function audioRecord(value: unknown): AudioRecord | null {
  if (!isObject(value)) return null;
  if (value.missing === true) {
    return { missing: true, contentType: (value.content_type as string | undefined) ?? 'audio/wav' };
  }
  const path = value.path as string;
  return { missing: false, path, contentType: audioType(path, value.content_type) ?? 'audio/wav' };
}

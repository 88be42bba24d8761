/**
 * One import line → a typed record, or the reasons it is refused. Pure: no I/O, no knowledge of
 * other lines (references are checked over the whole file in validateImport.ts).
 */
import { ROUTE_GROUPS, type RouteGroup } from '../contract/routes.js';
import { isCalendarDate, parseRfc3339 } from '../time.js';

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
const AUDIO_CONTENT_TYPE = /^audio\/[A-Za-z0-9.+-]+$/;
const MAX_ID_LENGTH = 255;

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
  const f = new Fields(value);
  const record = READERS[kind as RecordKind](f);
  const reasons = f.problems();
  if (reasons.length === 0) return { ok: true, record };
  const refused: ParsedLine = { ok: false, reasons, refers: referencesOf(kind as RecordKind, value) };
  if (typeof value.id === 'string' && value.id !== '')
    refused.declares = { kind: kind as RecordKind, id: value.id };
  return refused;
}

/** The reference fields of a refused line that are usable IDs (the others have their own reasons). */
function referencesOf(kind: RecordKind, value: Record<string, unknown>): LineReferences {
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

const READERS: { [K in RecordKind]: (f: Fields) => ImportRecord } = {
  organization: (f) => {
    f.allowOnly([
      'kind',
      'id',
      'name',
      'allowlisted',
      'routes',
      'api_keys_enabled',
      'created_at',
      'updated_at',
    ]);
    return {
      kind: 'organization',
      id: f.id('id'),
      name: f.text('name'),
      allowlisted: f.bool('allowlisted', false),
      routes: f.routes('routes'),
      apiKeysEnabled: f.bool('api_keys_enabled', true),
      createdAt: f.optionalInstant('created_at'),
      updatedAt: f.optionalInstant('updated_at'),
    };
  },
  patient: (f) => {
    f.allowOnly([
      'kind',
      'id',
      'organization_id',
      'first_name',
      'last_name',
      'date_of_birth',
      'created_at',
      'updated_at',
    ]);
    return {
      kind: 'patient',
      id: f.id('id'),
      organizationId: f.id('organization_id'),
      firstName: f.text('first_name'),
      lastName: f.text('last_name'),
      dateOfBirth: f.date('date_of_birth'),
      createdAt: f.optionalInstant('created_at'),
      updatedAt: f.optionalInstant('updated_at'),
    };
  },
  encounter: (f) => {
    f.allowOnly([
      'kind',
      'id',
      'organization_id',
      'patient_id',
      'encounter_type',
      'status',
      'date_of_service',
      'created_at',
      'updated_at',
      'demo_training',
    ]);
    return {
      kind: 'encounter',
      id: f.id('id'),
      organizationId: f.id('organization_id'),
      patientId: f.id('patient_id'),
      encounterType: f.text('encounter_type'),
      status: f.text('status'),
      dateOfService: f.instant('date_of_service'),
      createdAt: f.instant('created_at'),
      updatedAt: f.instant('updated_at'),
      demoTraining: f.bool('demo_training', false),
    };
  },
  document: readDocument,
};

function readDocument(f: Fields): DocumentRecord {
  f.allowOnly([
    'kind',
    'id',
    'encounter_id',
    'schema_type',
    'title',
    'status',
    'workflow_variant',
    'created_at',
    'updated_at',
    'content',
    'audio_duration_seconds',
    'transcript',
    'audio',
  ]);
  const schemaType = f.text('schema_type');
  const isDocument = schemaType === 'document';
  const isAmbient = schemaType === 'ambient_transcript';
  const record: DocumentRecord = {
    kind: 'document',
    id: f.id('id'),
    encounterId: f.id('encounter_id'),
    schemaType,
    title: f.string('title'),
    status: f.nullableText('status'),
    workflowVariant: f.nullableText('workflow_variant'),
    audioDurationSeconds: null,
    content: null,
    createdAt: f.instant('created_at'),
    updatedAt: f.instant('updated_at'),
    transcript: null,
    audio: null,
  };
  if (isDocument) {
    // The contract: status and workflow_variant are null for schema_type document.
    if (record.status !== null) f.fail('status must be null for schema_type document');
    if (record.workflowVariant !== null) f.fail('workflow_variant must be null for schema_type document');
    record.content = f.content('content');
  } else if (f.has('content')) {
    f.fail(`content belongs to schema_type document only, not ${schemaType}`);
  }
  if (isAmbient) {
    record.transcript = f.transcript('transcript');
    record.audio = f.audio('audio');
    record.audioDurationSeconds =
      f.nullableNumber('audio_duration_seconds') ?? record.transcript?.audioDurationSeconds ?? null;
  } else {
    for (const name of ['transcript', 'audio', 'audio_duration_seconds']) {
      if (f.has(name)) f.fail(`${name} belongs to schema_type ambient_transcript only, not ${schemaType}`);
    }
  }
  return record;
}

function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === undefined) return 'missing';
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/**
 * Reads fields off one object, noting every problem instead of stopping at the first, so one run
 * reports all that is wrong with a line. Getters return a placeholder when the field is bad; the
 * record is used only when there are no problems.
 */
class Fields {
  private readonly found: string[] = [];
  constructor(
    private readonly object: Record<string, unknown>,
    private readonly prefix = '',
  ) {}

  problems(): string[] {
    return this.found;
  }

  fail(message: string): void {
    this.found.push(message);
  }

  has(name: string): boolean {
    return this.object[name] !== undefined;
  }

  allowOnly(names: readonly string[]): void {
    for (const key of Object.keys(this.object)) {
      if (!names.includes(key)) this.fail(`unknown field ${this.prefix}${key}`);
    }
  }

  private bad(name: string, expected: string): void {
    this.fail(`${this.prefix}${name} must be ${expected} (got ${describe(this.object[name])})`);
  }

  id(name: string): string {
    const value = this.object[name];
    if (
      typeof value !== 'string' ||
      value === '' ||
      value.length > MAX_ID_LENGTH ||
      hasControlCharacter(value)
    ) {
      this.bad(name, `an id (a string of 1 to ${MAX_ID_LENGTH} characters, no control characters)`);
      return '';
    }
    return value;
  }

  string(name: string): string {
    const value = this.object[name];
    if (typeof value !== 'string') {
      this.bad(name, 'a string');
      return '';
    }
    return value;
  }

  text(name: string): string {
    const value = this.object[name];
    if (typeof value !== 'string' || value.trim() === '') {
      this.bad(name, 'a non-empty string');
      return '';
    }
    return value;
  }

  nullableText(name: string): string | null {
    const value = this.object[name];
    if (value === undefined || value === null) return null;
    if (typeof value !== 'string' || value.trim() === '') {
      this.bad(name, 'a non-empty string or null');
      return null;
    }
    return value;
  }

  bool(name: string, fallback: boolean): boolean {
    const value = this.object[name];
    if (value === undefined) return fallback;
    if (typeof value !== 'boolean') {
      this.bad(name, 'true or false');
      return fallback;
    }
    return value;
  }

  number(name: string, min = 0): number {
    const value = this.object[name];
    if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
      this.bad(name, `a number of at least ${min}`);
      return 0;
    }
    return value;
  }

  nullableNumber(name: string): number | null {
    const value = this.object[name];
    if (value === undefined || value === null) return null;
    return this.number(name);
  }

  instant(name: string): number {
    const value = this.object[name];
    const parsed = typeof value === 'string' ? parseRfc3339(value) : undefined;
    if (!parsed) {
      this.bad(name, 'an RFC 3339 date-time with an offset, e.g. 2026-05-01T14:00:00Z');
      return 0;
    }
    return parsed.ms;
  }

  optionalInstant(name: string): number | undefined {
    return this.object[name] === undefined ? undefined : this.instant(name);
  }

  date(name: string): string {
    const value = this.object[name];
    if (typeof value !== 'string' || !isCalendarDate(value)) {
      this.bad(name, 'a calendar date YYYY-MM-DD');
      return '';
    }
    return value;
  }

  routes(name: string): RouteGroup[] {
    const value = this.object[name];
    if (value === undefined) return [];
    if (!Array.isArray(value) || !value.every((v) => (ROUTE_GROUPS as readonly unknown[]).includes(v))) {
      this.bad(name, `a list of route groups (${ROUTE_GROUPS.join(', ')})`);
      return [];
    }
    return ROUTE_GROUPS.filter((g) => value.includes(g));
  }

  private nested(name: string): Fields | undefined {
    const value = this.object[name];
    if (!isObject(value)) return undefined;
    return new Fields(value, `${this.prefix}${name}.`);
  }

  private adopt(inner: Fields): void {
    this.found.push(...inner.found);
  }

  content(name: string): { format: string; text: string } | null {
    const inner = this.nested(name);
    if (!inner) {
      this.bad(name, 'an object {"format":"markdown","text":...} (schema_type document has content)');
      return null;
    }
    inner.allowOnly(['format', 'text']);
    const format = inner.string('format');
    if (format !== '' && format !== 'markdown') inner.fail(`${name}.format must be "markdown"`);
    const text = inner.string('text');
    this.adopt(inner);
    return { format, text };
  }

  transcript(name: string): TranscriptRecord | null {
    const value = this.object[name];
    if (value === undefined || value === null) return null;
    const inner = this.nested(name);
    if (!inner) {
      this.bad(name, 'an object or null');
      return null;
    }
    inner.allowOnly(['finalized', 'provider', 'audio_duration_seconds', 'turns', 'finalized_at']);
    const finalized = inner.object.finalized;
    if (typeof finalized !== 'boolean') inner.bad('finalized', 'true or false');
    const record: TranscriptRecord = {
      finalized: finalized === true,
      // A finalized transcript is served as is, so everything the route shows must be there.
      provider: finalized === true ? inner.text('provider') : inner.nullableText('provider'),
      audioDurationSeconds:
        finalized === true
          ? inner.number('audio_duration_seconds')
          : inner.nullableNumber('audio_duration_seconds'),
      turns: inner.turns('turns', finalized === true),
      finalizedAt: inner.optionalInstant('finalized_at'),
    };
    this.adopt(inner);
    return record;
  }

  private turns(name: string, required: boolean): TurnRecord[] {
    const value = this.object[name];
    if (value === undefined && !required) return [];
    if (!Array.isArray(value)) {
      this.bad(name, 'a list of turns');
      return [];
    }
    const turns: TurnRecord[] = [];
    value.forEach((item, index) => {
      const label = `${this.prefix}${name}[${index}]`;
      if (!isObject(item)) {
        this.fail(`${label} must be an object {speaker, start, end, text}`);
        return;
      }
      const turn = new Fields(item, `${label}.`);
      turn.allowOnly(['speaker', 'start', 'end', 'text']);
      const parsed = {
        speaker: turn.text('speaker'),
        start: turn.number('start'),
        end: turn.number('end'),
        text: turn.string('text'),
      };
      if (turn.found.length === 0 && parsed.end < parsed.start) turn.fail(`${label}.end is before its start`);
      this.adopt(turn);
      turns.push(parsed);
    });
    return turns;
  }

  audio(name: string): AudioRecord | null {
    const value = this.object[name];
    if (value === undefined || value === null) return null;
    const inner = this.nested(name);
    if (!inner) {
      this.bad(name, 'an object {"path", "content_type"}, {"missing": true} or null');
      return null;
    }
    inner.allowOnly(['path', 'content_type', 'missing']);
    const given = inner.object.content_type;
    if (given !== undefined && (typeof given !== 'string' || !AUDIO_CONTENT_TYPE.test(given))) {
      inner.bad('content_type', 'an audio media type such as audio/wav');
    }
    const contentType = typeof given === 'string' ? given : undefined;
    let result: AudioRecord | null = null;
    if (inner.object.missing !== undefined) {
      if (inner.object.missing !== true) inner.bad('missing', 'true (or leave it out)');
      if (inner.has('path')) inner.fail(`${name} has both missing and path`);
      result = { missing: true, contentType: contentType ?? 'audio/wav' };
    } else {
      const path = inner.text('path');
      const extension = /\.[A-Za-z0-9]+$/.exec(path)?.[0].toLowerCase() ?? '';
      const type = contentType ?? AUDIO_TYPES[extension];
      if (path !== '' && type === undefined)
        inner.fail(`${name}.content_type is required for ${describe(path)}`);
      result = { missing: false, path, contentType: type ?? 'audio/wav' };
    }
    this.adopt(inner);
    return result;
  }
}

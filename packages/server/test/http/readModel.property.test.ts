/**
 * Property: every answer of routes 1-4, served from the read model's stored bytes, is byte for byte
 * the answer computed here from the normalized tables (the rows the importer wrote, turned into
 * the contract's shapes and serialized), for thousands of random encounters and random queries,
 * before and after re-imports that change patients, encounters (created_at, patient, demo flag),
 * documents (title, type, encounter) and transcripts. Errors keep their reason codes. Alongside:
 * each 200's ETag is a function of its bytes (equal bytes, equal tags; different bytes, different
 * tags), and If-None-Match with it answers 304.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import type { Caller } from '../../src/auth/verifyApiKey.js';
import { PUBLIC_SCHEMA_TYPES } from '../../src/contract/documentTypes.js';
import type { EncounterAccess } from '../../src/database/encounterAccess.js';
import type { DocumentRow, EncounterRow, PatientRow, TranscriptRow } from '../../src/database/schema.js';
import { Random } from '../../src/demo/random.js';
import { getDocument, getTranscript } from '../../src/domain/documents.js';
import { getEncounter, listEncounters } from '../../src/domain/encounters.js';
import { ApiError } from '../../src/domain/errors.js';
import type { StoredAnswer } from '../../src/domain/storedAnswer.js';
import { importNdjsonFile } from '../../src/ingest/importFile.js';
import { toDocumentDetail, toEncounterBody, toTranscriptBody } from '../../src/readModel/write/views.js';
import { type DocumentInEncounter, findDocumentAccess } from '../../src/store/documents.js';
import { DAY_MS, HOUR_MS } from '../../src/time.js';
import { type Line, writeImportFile } from '../ingest/importFiles.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { forEachStore } from '../support/stores.js';

const ORG_A = 'org_rm_a';
const ORG_B = 'org_rm_b';
/**
 * Enough encounters in org A for offsets past 1,000 (where the list skips by whole days), and about
 * 290 a day, past the 200 entries into a day from which it places the offset by hour.
 */
const ENCOUNTERS_A = 1600;
const ENCOUNTERS_B = 60;
const T0 = Date.UTC(2026, 2, 1);
const DAYS = 5;

interface DataSet {
  patients: { id: string; org: string; first: string; last: string; dob: string }[];
  encounters: {
    id: string;
    org: string;
    patient: string;
    createdAt: number;
    status: string;
    demo: boolean;
  }[];
  documents: {
    id: string;
    encounter: string;
    org: string;
    type: 'document' | 'ambient_transcript' | 'internal_note';
    title: string;
    createdAt: number;
    transcript: 'finalized' | 'draft' | 'none';
    turns: number;
  }[];
}

/** created_at values with many ties and values on and beside day and hour boundaries. */
function randomTime(random: Random): number {
  const day = random.int(0, DAYS - 1);
  const shape = random.int(0, 11);
  if (shape === 0) return T0 + day * DAY_MS;
  if (shape === 1) return T0 + day * DAY_MS - 1;
  if (shape === 2) return T0 + day * DAY_MS + random.int(0, 20) * 60_000;
  if (shape === 3) return T0 + day * DAY_MS + random.int(1, 23) * HOUR_MS;
  if (shape === 4) return T0 + day * DAY_MS + random.int(1, 23) * HOUR_MS - 1;
  return T0 + day * DAY_MS + random.int(0, DAY_MS - 1);
}

function generate(seed: number): DataSet {
  const random = new Random();
  random.seed(seed);
  const data: DataSet = { patients: [], encounters: [], documents: [] };
  for (const [org, patients, encounters] of [
    [ORG_A, 60, ENCOUNTERS_A],
    [ORG_B, 6, ENCOUNTERS_B],
  ] as const) {
    for (let i = 0; i < patients; i++) {
      data.patients.push({
        id: `pat_${org}_${i}`,
        org,
        first: random.pick(['Ana', 'Bo', 'Chen', 'Zoë', 'Émile "E"']),
        last: `Last${i}\\${random.int(0, 9)}`,
        dob: `19${random.int(40, 99)}-0${random.int(1, 9)}-1${random.int(0, 9)}`,
      });
    }
    for (let i = 0; i < encounters; i++) {
      const id = `enc_${org}_${String(i).padStart(5, '0')}`;
      data.encounters.push({
        id,
        org,
        patient: `pat_${org}_${random.int(0, patients - 1)}`,
        createdAt: randomTime(random),
        status: random.pick(['completed', 'in_progress']),
        demo: random.chance(0.08),
      });
      for (let d = random.int(0, 3); d > 0; d--) data.documents.push(randomDocument(random, id, org, d));
    }
  }
  return data;
}

function randomDocument(
  random: Random,
  encounter: string,
  org: string,
  n: number,
): DataSet['documents'][number] {
  return {
    id: `doc_${encounter}_${n}`,
    encounter,
    org,
    type: random.pick(['document', 'document', 'ambient_transcript', 'ambient_transcript', 'internal_note']),
    title: random.pick(['SOAP note', 'Visit recording', 'Überweisung', 'Line\nbreak']),
    createdAt: randomTime(random),
    transcript: random.pick(['finalized', 'finalized', 'draft', 'none']),
    turns: random.int(1, 3),
  };
}

/** Changes a re-import makes: names, created_at, patients, demo flags, titles, types, moves. */
function mutate(data: DataSet, seed: number): DataSet {
  const random = new Random();
  random.seed(seed);
  const next: DataSet = structuredClone(data);
  for (const p of next.patients) if (random.chance(0.2)) p.last = `${p.last}-changed`;
  const byOrg = (org: string) => next.encounters.filter((e) => e.org === org);
  for (const e of next.encounters) {
    if (random.chance(0.1)) e.createdAt = randomTime(random);
    if (random.chance(0.05)) e.patient = random.pick(next.patients.filter((p) => p.org === e.org)).id;
    if (random.chance(0.03)) e.demo = !e.demo;
    if (random.chance(0.05)) e.status = 'amended';
  }
  for (const d of next.documents) {
    if (random.chance(0.1)) d.title = `${d.title} (rev)`;
    if (random.chance(0.05)) d.transcript = random.pick(['finalized', 'draft', 'none']);
    if (random.chance(0.03)) d.type = random.pick(['document', 'ambient_transcript', 'internal_note']);
    if (random.chance(0.03)) d.encounter = random.pick(byOrg(d.org)).id;
  }
  for (let i = 0; i < 40; i++) {
    const id = `enc_${ORG_A}_new_${seed}_${i}`;
    next.encounters.push({
      id,
      org: ORG_A,
      patient: random.pick(next.patients.filter((p) => p.org === ORG_A)).id,
      createdAt: randomTime(random),
      status: 'completed',
      demo: false,
    });
    next.documents.push(randomDocument(random, id, ORG_A, 1));
  }
  return next;
}

const iso = (ms: number) => new Date(ms).toISOString();

function importLines(data: DataSet): Line[] {
  const lines: Line[] = [ORG_A, ORG_B].map((id) => ({
    kind: 'organization',
    id,
    name: id,
    allowlisted: true,
    routes: ['encounters', 'documents'],
    api_keys_enabled: true,
  }));
  for (const p of data.patients) {
    lines.push({
      kind: 'patient',
      id: p.id,
      organization_id: p.org,
      first_name: p.first,
      last_name: p.last,
      date_of_birth: p.dob,
    });
  }
  for (const e of data.encounters) {
    lines.push({
      kind: 'encounter',
      id: e.id,
      organization_id: e.org,
      patient_id: e.patient,
      encounter_type: 'ambient',
      status: e.status,
      date_of_service: iso(e.createdAt - 3_600_000),
      created_at: iso(e.createdAt),
      updated_at: iso(e.createdAt + 60_000),
      demo_training: e.demo,
    });
  }
  for (const d of data.documents) {
    const ambient = d.type === 'ambient_transcript';
    lines.push({
      kind: 'document',
      id: d.id,
      encounter_id: d.encounter,
      schema_type: d.type,
      title: d.title,
      status: d.type === 'document' ? null : 'completed',
      workflow_variant: d.type === 'document' ? null : 'ambient',
      created_at: iso(d.createdAt),
      updated_at: iso(d.createdAt + 1000),
      ...(d.type === 'document' ? { content: { format: 'markdown', text: `# ${d.title}\n\u2028ok` } } : {}),
      ...(ambient ? { audio_duration_seconds: 61.25 } : {}),
      ...(ambient && d.transcript !== 'none'
        ? {
            transcript: {
              finalized: d.transcript === 'finalized',
              provider: 'example-asr',
              audio_duration_seconds: 61.25,
              turns: Array.from({ length: d.turns }, (_, i) => ({
                speaker: i % 2 ? 'patient' : 'clinician',
                start: i * 1.5,
                end: i * 1.5 + 1.25,
                text: `Turn ${i} “quoted” \u00e9`,
              })),
            },
          }
        : {}),
    });
  }
  return lines;
}

/** The normalized tables, read back, and the answers they imply. */
interface Reference {
  encounters: Map<string, EncounterRow>;
  patients: Map<string, PatientRow>;
  documents: Map<string, DocumentRow>;
  transcripts: Map<string, TranscriptRow>;
  summaries: Map<string, string>;
}

async function readReference(server: TestServer): Promise<Reference> {
  const db = server.services.store.db;
  const num = <T extends Record<string, unknown>>(row: T, keys: (keyof T)[]) => {
    for (const k of keys) if (row[k] !== null) (row as Record<string, unknown>)[k as string] = Number(row[k]);
    return row;
  };
  const encounters = new Map(
    (await db.selectFrom('encounters').selectAll().execute()).map((r) => [
      r.id,
      num(r, ['created_at', 'updated_at', 'date_of_service']),
    ]),
  );
  const patients = new Map(
    (await db.selectFrom('patients').selectAll().execute()).map((r) => [
      r.id,
      num(r, ['created_at', 'updated_at']),
    ]),
  );
  const documents = new Map(
    (await db.selectFrom('documents').selectAll().execute()).map((r) => [
      r.id,
      num(r, ['created_at', 'updated_at']),
    ]),
  );
  const transcripts = new Map(
    (await db.selectFrom('transcripts').selectAll().execute()).map((r) => [
      r.document_id,
      num(r, ['finalized_at']),
    ]),
  );
  const docsByEncounter = new Map<string, DocumentRow[]>();
  for (const d of documents.values()) {
    if (!(PUBLIC_SCHEMA_TYPES as readonly string[]).includes(d.schema_type)) continue;
    docsByEncounter.set(d.encounter_id, [...(docsByEncounter.get(d.encounter_id) ?? []), d]);
  }
  const summaries = new Map<string, string>();
  for (const e of encounters.values()) {
    const docs = (docsByEncounter.get(e.id) ?? []).sort(
      (a, b) => a.created_at - b.created_at || (a.id < b.id ? -1 : 1),
    );
    summaries.set(
      e.id,
      JSON.stringify(
        toEncounterBody({ encounter: e, patient: patients.get(e.patient_id)!, documents: docs }),
      ),
    );
  }
  return { encounters, patients, documents, transcripts, summaries };
}

interface ListQuery {
  limit: number;
  offset: number;
  sort: 'asc' | 'desc';
  start: number | undefined;
  end: number | undefined;
}

function expectedList(ref: Reference, q: ListQuery): string {
  const rows = [...ref.encounters.values()]
    .filter(
      (e) =>
        e.organization_id === ORG_A &&
        e.demo_training === 0 &&
        (q.start === undefined || e.created_at >= q.start) &&
        (q.end === undefined || e.created_at < q.end),
    )
    .sort((a, b) => a.created_at - b.created_at || (a.id < b.id ? -1 : 1));
  if (q.sort === 'desc') rows.reverse();
  const items = rows.slice(q.offset, q.offset + q.limit).map((e) => ref.summaries.get(e.id));
  return `{"items":[${items.join(',')}],"limit":${q.limit},"offset":${q.offset},"total":${rows.length}}`;
}

type Expected = { status: 200; body: string } | { status: number; reason: string };

function encounterCheck(ref: Reference, encounterId: string): Expected | undefined {
  const e = ref.encounters.get(encounterId);
  if (!e) return { status: 404, reason: 'encounter_not_found' };
  if (e.organization_id !== ORG_A) return { status: 403, reason: 'cross_organization_denied' };
  if (e.demo_training === 1) return { status: 403, reason: 'demo_training_denied' };
  return undefined;
}

function expectedEncounter(ref: Reference, encounterId: string): Expected {
  return (
    encounterCheck(ref, encounterId) ?? {
      status: 200,
      body: `{"encounter":${ref.summaries.get(encounterId)}}`,
    }
  );
}

function documentCheck(
  ref: Reference,
  encounterId: string,
  documentId: string,
): { denied: Expected } | { document: DocumentRow } {
  const denied = encounterCheck(ref, encounterId);
  if (denied) return { denied };
  const document = ref.documents.get(documentId);
  if (!document || document.encounter_id !== encounterId) {
    return { denied: { status: 404, reason: 'document_not_found' } };
  }
  return { document };
}

function expectedDocument(ref: Reference, encounterId: string, documentId: string): Expected {
  const checked = documentCheck(ref, encounterId, documentId);
  if ('denied' in checked) return checked.denied;
  const d = checked.document;
  if (!(PUBLIC_SCHEMA_TYPES as readonly string[]).includes(d.schema_type)) {
    return { status: 400, reason: 'unsupported_document_type' };
  }
  return { status: 200, body: JSON.stringify({ document: toDocumentDetail(d) }) };
}

function expectedTranscript(ref: Reference, encounterId: string, documentId: string): Expected {
  const checked = documentCheck(ref, encounterId, documentId);
  if ('denied' in checked) return checked.denied;
  const d = checked.document;
  if (d.schema_type !== 'ambient_transcript') return { status: 400, reason: 'unsupported_document_type' };
  const t = ref.transcripts.get(d.id);
  if (t?.finalized !== 1) return { status: 404, reason: 'transcript_not_found' };
  return { status: 200, body: JSON.stringify(toTranscriptBody(d, t)) };
}

/** Random list queries, encounter IDs and document pairs over the reference's data. */
function queryArbitraries(ref: Reference) {
  const times = [...ref.encounters.values()].map((e) => e.created_at);
  const timeArb = fc.oneof(
    fc.constantFrom(...times),
    fc.constantFrom(...times).map((t) => t + 1),
    fc.integer({ min: 0, max: DAYS }).map((d) => T0 + d * DAY_MS),
  );
  const listArb = fc
    .record({
      limit: fc.integer({ min: 1, max: 100 }),
      offset: fc.oneof(
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 900, max: ENCOUNTERS_A + 50 }),
        fc.constant(10_000),
      ),
      sort: fc.constantFrom('asc' as const, 'desc' as const),
      start: fc.option(timeArb, { nil: undefined }),
      end: fc.option(timeArb, { nil: undefined }),
      conditional: fc.boolean(),
    })
    .filter((q) => q.start === undefined || q.end === undefined || q.start < q.end);
  const encounterIds = [...ref.encounters.keys(), 'enc_unknown'];
  const documentIds = [...ref.documents.keys(), 'doc_unknown'];
  const docArb = fc.oneof(
    // A document under its own encounter (the usual case) …
    fc.constantFrom(...documentIds.slice(0, -1)).map((d) => [ref.documents.get(d)!.encounter_id, d] as const),
    // … or any pair at all.
    fc.tuple(fc.constantFrom(...encounterIds), fc.constantFrom(...documentIds)),
  );
  return { listArb, encounterIds, docArb };
}

/** A domain call's answer as the route would send it: its bytes, or its status and reason code. */
function outcomeOf(answer: Promise<StoredAnswer>): Promise<Expected> {
  return answer.then(
    (stored) => ({ status: 200, body: stored.body.toString() }),
    (error: unknown) => {
      if (!(error instanceof ApiError)) throw error;
      return { status: error.status, reason: error.reasonCode };
    },
  );
}

/** The audio read's access as an outcome: a denial's code, or the document found. */
function accessOutcome(access: EncounterAccess<DocumentInEncounter>): Expected {
  switch (access.status) {
    case 'absent':
      return { status: 404, reason: 'encounter_not_found' };
    case 'other_organization':
      return { status: 403, reason: 'cross_organization_denied' };
    case 'demo_training':
      return { status: 403, reason: 'demo_training_denied' };
    case 'found':
      return access.encounter.document === undefined
        ? { status: 404, reason: 'document_not_found' }
        : { status: 200, body: access.encounter.document.id };
  }
}

forEachStore('read model answers equal answers computed from the normalized tables', (kind) => {
  let server: TestServer;
  let token: string;
  /** Every 200 seen, body → tag and tag → body, across all phases. */
  const tagOfBody = new Map<string, string>();
  const bodyOfTag = new Map<string, string>();

  before(async () => {
    server = await startTestServer(kind);
    const data = generate(14);
    await importNdjsonFile(server.services, writeImportFile(importLines(data)));
    ({ token } = await server.fixtures.key(ORG_A));
    phases.push(data);
  });
  after(() => server.close());
  const phases: DataSet[] = [];

  async function check(path: string, expected: Expected, conditional: boolean): Promise<void> {
    const r = await server.api.get(path, { token });
    assert.equal(r.status, expected.status, `${path}: ${r.text}`);
    if (!('body' in expected)) {
      assert.equal(r.body.reason_code, expected.reason, path);
      assert.equal(r.headers.get('etag'), null);
      return;
    }
    assert.equal(r.text, expected.body, path);
    const tag = r.headers.get('etag');
    assert.match(tag ?? '', /^"[A-Za-z0-9_-]+"$/, `${path}: a strong ETag`);
    const known = tagOfBody.get(r.text);
    if (known !== undefined) assert.equal(tag, known, `${path}: equal bytes, equal tags`);
    const body = bodyOfTag.get(tag!);
    if (body !== undefined) assert.equal(body, r.text, `${path}: one tag, one body`);
    tagOfBody.set(r.text, tag!);
    bodyOfTag.set(tag!, r.text);
    if (conditional) {
      const again = await server.api.get(path, { token, headers: { 'if-none-match': `W/"x", ${tag}` } });
      assert.equal(again.status, 304, path);
      assert.equal(again.text, '');
      assert.equal(again.headers.get('etag'), tag);
      assert.equal(again.headers.get('cache-control'), 'no-store');
    }
  }

  async function checkAll(seed: number): Promise<void> {
    const ref = await readReference(server);
    const { listArb, encounterIds, docArb } = queryArbitraries(ref);
    await fc.assert(
      fc.asyncProperty(listArb, async (q) => {
        const params = new URLSearchParams({
          limit: String(q.limit),
          offset: String(q.offset),
          sort_order: q.sort,
        });
        if (q.start !== undefined) params.set('start_at', iso(q.start));
        if (q.end !== undefined) params.set('end_at', iso(q.end));
        await check(
          `/external/v1/encounters?${params}`,
          { status: 200, body: expectedList(ref, q) },
          q.conditional,
        );
      }),
      { numRuns: 250, seed },
    );

    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...encounterIds), fc.boolean(), async (id, conditional) => {
        await check(`/external/v1/encounters/${id}`, expectedEncounter(ref, id), conditional);
      }),
      { numRuns: 250, seed },
    );
    await fc.assert(
      fc.asyncProperty(docArb, fc.boolean(), async ([e, d], conditional) => {
        await check(`/external/v1/encounters/${e}/documents/${d}`, expectedDocument(ref, e, d), conditional);
        await check(
          `/external/v1/encounters/${e}/documents/${d}/transcript`,
          expectedTranscript(ref, e, d),
          conditional,
        );
      }),
      { numRuns: 250, seed },
    );
  }

  test('every route answers the bytes the normalized tables imply, with one tag per body', async () => {
    await checkAll(1);
  });

  test('reads made together in one turn, as a busy service makes them, answer as the tables imply', async () => {
    // Called below the HTTP layer so that every call starts in the same turn: on PostgreSQL each
    // read's calls then share one statement, whatever the machine's speed.
    const ref = await readReference(server);
    const db = server.services.store.db;
    const caller = { organizationId: ORG_A } as Caller;
    const { listArb, encounterIds, docArb } = queryArbitraries(ref);
    const lists = fc.sample(listArb, { numRuns: 80, seed: 5 });
    const encounters = fc.sample(fc.constantFrom(...encounterIds), { numRuns: 80, seed: 5 });
    const pairs = fc.sample(docArb, { numRuns: 80, seed: 5 });
    const [listAnswers, encounterAnswers, documentAnswers, transcriptAnswers, accesses] = await Promise.all([
      Promise.all(
        lists.map((q) =>
          outcomeOf(
            listEncounters(db, caller, {
              window: { startMs: q.start, endMs: q.end },
              sort: q.sort,
              limit: q.limit,
              offset: q.offset,
            }).then((listed) => listed.answer),
          ),
        ),
      ),
      Promise.all(encounters.map((id) => outcomeOf(getEncounter(db, caller, id)))),
      Promise.all(pairs.map(([e, d]) => outcomeOf(getDocument(db, caller, e, d)))),
      Promise.all(pairs.map(([e, d]) => outcomeOf(getTranscript(db, caller, e, d)))),
      Promise.all(pairs.map(([e, d]) => findDocumentAccess(db, ORG_A, e, d))),
    ]);
    assert.deepEqual(
      listAnswers,
      lists.map((q) => ({ status: 200, body: expectedList(ref, q) })),
    );
    assert.deepEqual(
      encounterAnswers,
      encounters.map((id) => expectedEncounter(ref, id)),
    );
    assert.deepEqual(
      documentAnswers,
      pairs.map(([e, d]) => expectedDocument(ref, e, d)),
    );
    assert.deepEqual(
      transcriptAnswers,
      pairs.map(([e, d]) => expectedTranscript(ref, e, d)),
    );
    // The audio route's read: the same access, and the document only under its own encounter.
    assert.deepEqual(
      accesses.map(accessOutcome),
      pairs.map(([e, d]) => {
        const checked = documentCheck(ref, e, d);
        return 'denied' in checked ? checked.denied : { status: 200, body: checked.document.id };
      }),
    );
  });

  test('after re-imports changing patients, encounters, documents and transcripts, still the same', async () => {
    for (const round of [2, 3]) {
      const next = mutate(phases.at(-1)!, round);
      await importNdjsonFile(server.services, writeImportFile(importLines(next)));
      phases.push(next);
      await checkAll(round);
    }
  });
});

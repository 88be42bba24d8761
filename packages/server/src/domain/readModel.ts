/**
 * The read model: for every encounter the exact bytes of its summary (the list item, and the
 * inside of the detail answer), for every document its detail, and for every finalized ambient
 * transcript its transcript answer, each with a strong entity tag computed from those bytes.
 *
 * Clinical data changes only through imports and the demo loader; each of them calls
 * `applyReadModelChanges` with what it wrote, inside its own transaction, so a reader never sees
 * stored answers that disagree with the normalized tables (the webhook outbox is written in that
 * same transaction). What depends on what: an encounter's summary on the encounter, its patient
 * and its public documents' summary fields; a document's detail on the document; a transcript
 * answer on the transcript and its document. So a patient's change rewrites the summaries of all
 * its encounters, and a document's change rewrites its encounter's summary (and, for a document
 * moved to another encounter, the summary of the one it left).
 */
import type { Kysely } from 'kysely';
import { inTransaction } from '../store/database.js';
import { PUBLIC_SCHEMA_TYPES } from '../store/encounters.js';
import {
  documentIdsAfter,
  documentSources,
  documentSummarySources,
  encounterIdsAfter,
  encounterIdsOfDocuments,
  encounterIdsOfPatients,
  encounterSources,
  upsertDocumentReads,
  upsertEncounterReads,
} from '../store/readModel.js';
import type { Database, DocumentReadsTable, EncounterReadsTable } from '../store/schema.js';
import { entityTagOfBytes } from './entityTags.js';
import { toDocumentDetail, toEncounterBody, toTranscriptBody } from './views.js';

/** IDs a write touched; any may be absent or empty. */
export interface ReadModelChanges {
  patients?: Iterable<string>;
  encounters?: Iterable<string>;
  documents?: Iterable<string>;
}

/** Rewrites every stored answer the changed rows feed, in the caller's transaction. */
export async function applyReadModelChanges(tx: Kysely<Database>, changes: ReadModelChanges): Promise<void> {
  const encounters = new Set(changes.encounters ?? []);
  const documents = [...new Set(changes.documents ?? [])];
  if (documents.length > 0) {
    // Before the document answers are rewritten: they name the encounter a moved document left.
    for (const id of await encounterIdsOfDocuments(tx, documents)) encounters.add(id);
    await writeDocumentReads(tx, documents);
  }
  const patients = [...new Set(changes.patients ?? [])];
  if (patients.length > 0) {
    for (const id of await encounterIdsOfPatients(tx, patients)) encounters.add(id);
  }
  if (encounters.size > 0) await writeEncounterReads(tx, [...encounters]);
}

const PUBLIC = new Set<string>(PUBLIC_SCHEMA_TYPES);

async function writeDocumentReads(tx: Kysely<Database>, documentIds: readonly string[]): Promise<void> {
  const rows: DocumentReadsTable[] = [];
  for (const { document, transcript } of await documentSources(tx, documentIds)) {
    const detail = PUBLIC.has(document.schema_type) ? JSON.stringify(toDocumentDetail(document)) : null;
    const transcriptBody =
      document.schema_type === 'ambient_transcript' && transcript?.finalized === 1
        ? JSON.stringify(toTranscriptBody(document, transcript))
        : null;
    rows.push({
      document_id: document.id,
      encounter_id: document.encounter_id,
      organization_id: document.organization_id,
      schema_type: document.schema_type,
      detail,
      detail_etag: detail === null ? null : entityTagOfBytes(detail),
      transcript: transcriptBody,
      transcript_etag: transcriptBody === null ? null : entityTagOfBytes(transcriptBody),
    });
  }
  await upsertDocumentReads(tx, rows);
}

async function writeEncounterReads(tx: Kysely<Database>, encounterIds: readonly string[]): Promise<void> {
  const sources = await encounterSources(tx, encounterIds);
  const documents = await documentSummarySources(
    tx,
    sources.map((s) => s.encounter.id),
  );
  const rows: EncounterReadsTable[] = [];
  for (const { encounter, patient } of sources) {
    if (!patient) throw new Error(`encounter ${encounter.id} has no patient row`);
    const summary = JSON.stringify(
      toEncounterBody({ encounter, patient, documents: documents.get(encounter.id) ?? [] }),
    );
    rows.push({
      encounter_id: encounter.id,
      organization_id: encounter.organization_id,
      demo_training: encounter.demo_training,
      created_at: encounter.created_at,
      patient_id: encounter.patient_id,
      summary,
      etag: entityTagOfBytes(summary),
    });
  }
  await upsertEncounterReads(tx, rows);
}

/** IDs per rebuild transaction. */
const REBUILD_PAGE = 1000;

/**
 * Builds the stored answers of every document and encounter (of one organization, or all):
 * `eds migrate` for data stored before the read model existed, and bulk loaders that write rows
 * without it. A page of IDs per transaction; repeating it rewrites the same bytes.
 */
export async function rebuildReadModel(db: Kysely<Database>, organizationId?: string): Promise<void> {
  for (let after = ''; ; ) {
    const ids = await documentIdsAfter(db, after, REBUILD_PAGE, organizationId);
    if (ids.length === 0) break;
    await inTransaction(db, (tx) => writeDocumentReads(tx, ids));
    after = ids.at(-1)!;
  }
  for (let after = ''; ; ) {
    const ids = await encounterIdsAfter(db, after, REBUILD_PAGE, organizationId);
    if (ids.length === 0) break;
    await inTransaction(db, (tx) => writeEncounterReads(tx, ids));
    after = ids.at(-1)!;
  }
}

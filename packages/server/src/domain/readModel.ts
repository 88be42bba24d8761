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
import { PUBLIC_SCHEMA_TYPES } from '../contract/documentTypes.js';
import { inTransaction } from '../store/database.js';
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
  const updater = new ReadModelUpdater(tx);
  if (changes.documents) await updater.documentsChanged([...changes.documents]);
  if (changes.patients) await updater.patientsChanged([...changes.patients]);
  if (changes.encounters) updater.encountersChanged(changes.encounters);
  await updater.flush();
}

/**
 * The same, for a large write made in batches (an import): document answers are rewritten with
 * each batch, but encounter summaries only once, at `flush`, however many of the batches (its
 * patient, itself, each of its documents) touched an encounter. Call `flush` before the
 * transaction commits.
 */
export class ReadModelUpdater {
  private readonly encounters = new Set<string>();
  constructor(private readonly tx: Kysely<Database>) {}

  encountersChanged(ids: Iterable<string>): void {
    for (const id of ids) this.encounters.add(id);
  }

  async patientsChanged(ids: readonly string[]): Promise<void> {
    this.encountersChanged(await encounterIdsOfPatients(this.tx, [...new Set(ids)]));
  }

  async documentsChanged(ids: readonly string[]): Promise<void> {
    const documents = [...new Set(ids)];
    if (documents.length === 0) return;
    // Before the document answers are rewritten: they name the encounter a moved document left.
    this.encountersChanged(await encounterIdsOfDocuments(this.tx, documents));
    await writeDocumentReads(this.tx, documents);
  }

  async flush(): Promise<void> {
    const ids = [...this.encounters];
    this.encounters.clear();
    for (let i = 0; i < ids.length; i += REBUILD_PAGE) {
      await writeEncounterReads(this.tx, ids.slice(i, i + REBUILD_PAGE));
    }
  }
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

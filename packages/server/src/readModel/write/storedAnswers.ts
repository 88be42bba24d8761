/**
 * Writes the stored answers of the given documents and encounters from their normalized rows:
 * the exact bytes each route answers with, and each one's strong entity tag.
 */
import type { Kysely } from 'kysely';
import { PUBLIC_SCHEMA_TYPES } from '../../contract/documentTypes.js';
import type { Database, DocumentReadsTable, EncounterReadsTable } from '../../database/schema.js';
import { chunks } from '../../database/statementBatches.js';
import { entityTagOfBytes } from '../entityTags.js';
import { documentSources, documentSummarySources, encounterSources } from './sources.js';
import { toDocumentDetail, toEncounterBody, toTranscriptBody } from './views.js';

type Tx = Kysely<Database>;

/** IDs whose stored answers are written in one step (a rebuild transaction, a flush page). */
export const ANSWER_PAGE = 1000;

const PUBLIC = new Set<string>(PUBLIC_SCHEMA_TYPES);

export async function writeDocumentReads(tx: Tx, documentIds: readonly string[]): Promise<void> {
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

export async function writeEncounterReads(tx: Tx, encounterIds: readonly string[]): Promise<void> {
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

/** Rows per insert: 7-9 columns each, under both dialects' bound-parameter limits. */
const WRITE_CHUNK = 200;

async function upsertEncounterReads(tx: Tx, rows: EncounterReadsTable[]): Promise<void> {
  for (const batch of chunks(rows, WRITE_CHUNK)) {
    await tx
      .insertInto('encounter_reads')
      .values(batch)
      .onConflict((oc) =>
        oc.column('encounter_id').doUpdateSet((eb) => ({
          organization_id: eb.ref('excluded.organization_id'),
          demo_training: eb.ref('excluded.demo_training'),
          created_at: eb.ref('excluded.created_at'),
          patient_id: eb.ref('excluded.patient_id'),
          summary: eb.ref('excluded.summary'),
          etag: eb.ref('excluded.etag'),
        })),
      )
      .execute();
  }
}

async function upsertDocumentReads(tx: Tx, rows: DocumentReadsTable[]): Promise<void> {
  for (const batch of chunks(rows, WRITE_CHUNK)) {
    await tx
      .insertInto('document_reads')
      .values(batch)
      .onConflict((oc) =>
        oc.column('document_id').doUpdateSet((eb) => ({
          encounter_id: eb.ref('excluded.encounter_id'),
          organization_id: eb.ref('excluded.organization_id'),
          schema_type: eb.ref('excluded.schema_type'),
          detail: eb.ref('excluded.detail'),
          detail_etag: eb.ref('excluded.detail_etag'),
          transcript: eb.ref('excluded.transcript'),
          transcript_etag: eb.ref('excluded.transcript_etag'),
        })),
      )
      .execute();
  }
}

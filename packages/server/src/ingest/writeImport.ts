/**
 * The write pass, inside the import's one transaction: one streaming read of the file per kind,
 * in reference order (organizations, patients, encounters, documents), so foreign keys hold on
 * both dialects whatever the line order. Rows go to the store's batch writers a batch at a time.
 */
import type { Insertable } from 'kysely';
import type { Db } from '../database/connection.js';
import type { DocumentsTable, RecordingsTable, TranscriptsTable } from '../database/schema.js';
import { OperatorError } from '../domain/errors.js';
import { ReadModelUpdater } from '../readModel/write/changes.js';
import {
  deleteRecordings,
  deleteTranscripts,
  lockOrganizationTotals,
  upsertDocuments,
  upsertEncounters,
  upsertPatients,
  upsertRecordings,
  upsertTranscripts,
} from '../store/clinicalWrites.js';
import { upsertOrganization } from '../store/organizations.js';
import { type RecordEventsOptions, recordTranscriptsReady } from '../webhooks/events.js';
import { missingRecordingKey, type StoredAudio } from './copyAudio.js';
import { readNdjsonLines } from './ndjsonLines.js';
import {
  type DocumentRecord,
  type EncounterRecord,
  type ImportRecord,
  type PatientRecord,
  parseImportLine,
  type RecordKind,
} from './records.js';
import { type ImportPlan, KIND_CODE } from './validateImport.js';

const BATCH = 2000;

/** Writes the validated file; returns the number of transcript_ready events recorded. */
export async function writeImport(
  tx: Db,
  file: string,
  plan: ImportPlan,
  audio: ReadonlyMap<string, StoredAudio>,
  now: number,
  config: RecordEventsOptions['config'],
): Promise<number> {
  // First, before any row of theirs: an import waits here for another that shares one of its
  // organizations to commit, so the two cannot deadlock, and its counts start from that one's.
  await lockOrganizationTotals(tx, plan.organizations);
  for await (const record of recordsOf<Extract<ImportRecord, { kind: 'organization' }>>(
    file,
    plan,
    'organization',
  )) {
    await upsertOrganization(tx, {
      id: record.id,
      name: record.name,
      allowlisted: record.allowlisted,
      routes: record.routes,
      apiKeysEnabled: record.apiKeysEnabled,
      createdAt: record.createdAt ?? now,
      updatedAt: record.updatedAt ?? now,
    });
  }
  // The stored answers the file changes (readModel/write/changes.ts), rewritten in this transaction.
  const readModel = new ReadModelUpdater(tx);
  await inBatches(recordsOf<PatientRecord>(file, plan, 'patient'), async (batch) => {
    await upsertPatients(
      tx,
      batch.map((p) => ({
        id: p.id,
        organization_id: p.organizationId,
        first_name: p.firstName,
        last_name: p.lastName,
        date_of_birth: p.dateOfBirth,
        created_at: p.createdAt ?? now,
        updated_at: p.updatedAt ?? now,
      })),
    );
    await readModel.patientsChanged(batch.map((p) => p.id));
  });
  await inBatches(recordsOf<EncounterRecord>(file, plan, 'encounter'), async (batch) => {
    await upsertEncounters(
      tx,
      batch.map((e) => ({
        id: e.id,
        organization_id: e.organizationId,
        patient_id: e.patientId,
        encounter_type: e.encounterType,
        status: e.status,
        date_of_service: e.dateOfService,
        created_at: e.createdAt,
        updated_at: e.updatedAt,
        demo_training: e.demoTraining ? 1 : 0,
      })),
    );
    readModel.encountersChanged(batch.map((e) => e.id));
  });
  let events = 0;
  await inBatches(recordsOf<DocumentRecord>(file, plan, 'document'), async (batch) => {
    events += await writeDocuments(tx, batch, plan, audio, now, config, readModel);
  });
  await readModel.flush();
  return events;
}

async function writeDocuments(
  tx: Db,
  batch: DocumentRecord[],
  plan: ImportPlan,
  audio: ReadonlyMap<string, StoredAudio>,
  now: number,
  config: RecordEventsOptions['config'],
  readModel: ReadModelUpdater,
): Promise<number> {
  const organizationOf = (d: DocumentRecord) => plan.encounterOrganization.get(d.encounterId)!;
  const documents: Insertable<DocumentsTable>[] = [];
  const transcripts: Insertable<TranscriptsTable>[] = [];
  const recordings: Insertable<RecordingsTable>[] = [];
  const withoutTranscript: string[] = [];
  const withoutRecording: string[] = [];
  for (const d of batch) {
    documents.push({
      id: d.id,
      encounter_id: d.encounterId,
      organization_id: organizationOf(d),
      schema_type: d.schemaType,
      title: d.title,
      status: d.status,
      workflow_variant: d.workflowVariant,
      audio_duration_seconds: d.audioDurationSeconds,
      content_format: d.content?.format ?? null,
      content_text: d.content?.text ?? null,
      created_at: d.createdAt,
      updated_at: d.updatedAt,
    });
    const t = d.transcript;
    if (t) {
      transcripts.push({
        document_id: d.id,
        finalized: t.finalized ? 1 : 0,
        provider: t.provider,
        audio_duration_seconds: t.audioDurationSeconds,
        turns: JSON.stringify(t.turns),
        // From the record, so re-importing the same file leaves the row as it was.
        finalized_at: t.finalized ? (t.finalizedAt ?? d.updatedAt) : null,
      });
    } else withoutTranscript.push(d.id);
    if (d.audio?.missing) {
      recordings.push({
        document_id: d.id,
        object_key: missingRecordingKey(d.id),
        content_type: d.audio.contentType,
        byte_size: null,
      });
    } else if (d.audio) {
      const stored = audio.get(d.id);
      if (!stored) throw new Error(`internal: audio of document ${d.id} was not copied`);
      recordings.push({
        document_id: d.id,
        object_key: stored.objectKey,
        content_type: stored.contentType,
        byte_size: stored.byteSize,
      });
    } else withoutRecording.push(d.id);
  }
  await upsertDocuments(tx, documents);
  await deleteTranscripts(tx, withoutTranscript);
  const finalized = new Set(await upsertTranscripts(tx, transcripts));
  await deleteRecordings(tx, withoutRecording);
  await upsertRecordings(tx, recordings);
  await readModel.documentsChanged(batch.map((d) => d.id));
  if (finalized.size === 0) return 0;
  const ready = batch
    .filter((d) => finalized.has(d.id))
    .map((d) => ({ organizationId: organizationOf(d), encounterId: d.encounterId, documentId: d.id }));
  await recordTranscriptsReady(tx, ready, now, { config });
  return ready.length;
}

async function* recordsOf<T extends ImportRecord>(file: string, plan: ImportPlan, kind: RecordKind) {
  const code = KIND_CODE[kind];
  for await (const { number, text } of readNdjsonLines(file)) {
    if (plan.lineKinds[number] !== code) continue;
    const parsed = parseImportLine(text);
    if (!parsed.ok || parsed.record.kind !== kind) {
      throw new OperatorError(
        `the file changed while it was being imported (line ${number}); nothing was written`,
      );
    }
    yield parsed.record as T;
  }
}

async function inBatches<T>(records: AsyncIterable<T>, write: (batch: T[]) => Promise<void>): Promise<void> {
  let batch: T[] = [];
  for await (const record of records) {
    batch.push(record);
    if (batch.length === BATCH) {
      await write(batch);
      batch = [];
    }
  }
  if (batch.length > 0) await write(batch);
}

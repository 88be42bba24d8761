/**
 * The normalized rows a stored answer is built from, read inside the writing transaction, and
 * which encounters' summaries a change of patients or documents touches.
 */
import type { Kysely } from 'kysely';
import { PUBLIC_SCHEMA_TYPES } from '../../contract/documentTypes.js';
import type {
  Database,
  DocumentRow,
  EncounterRow,
  PatientRow,
  TranscriptRow,
} from '../../database/schema.js';
import { chunks } from '../../database/statementBatches.js';

type Tx = Kysely<Database>;

export interface EncounterSource {
  encounter: EncounterRow;
  /** Undefined only if the patient row is missing (imports refuse that). */
  patient: PatientRow | undefined;
}

export async function encounterSources(tx: Tx, encounterIds: readonly string[]): Promise<EncounterSource[]> {
  const out: EncounterSource[] = [];
  for (const batch of chunks(encounterIds)) {
    const rows = await tx
      .selectFrom('encounters as e')
      .leftJoin('patients as p', (join) =>
        join.onRef('p.id', '=', 'e.patient_id').onRef('p.organization_id', '=', 'e.organization_id'),
      )
      .select([
        'e.id',
        'e.organization_id',
        'e.patient_id',
        'e.encounter_type',
        'e.status',
        'e.date_of_service',
        'e.created_at',
        'e.updated_at',
        'e.demo_training',
        'p.id as p_id',
        'p.first_name as p_first_name',
        'p.last_name as p_last_name',
        'p.date_of_birth as p_date_of_birth',
        'p.created_at as p_created_at',
        'p.updated_at as p_updated_at',
      ])
      .where('e.id', 'in', batch)
      .execute();
    for (const r of rows) {
      out.push({
        encounter: {
          id: r.id,
          organization_id: r.organization_id,
          patient_id: r.patient_id,
          encounter_type: r.encounter_type,
          status: r.status,
          date_of_service: Number(r.date_of_service),
          created_at: Number(r.created_at),
          updated_at: Number(r.updated_at),
          demo_training: r.demo_training,
        },
        patient:
          r.p_id === null
            ? undefined
            : {
                id: r.p_id,
                organization_id: r.organization_id,
                first_name: r.p_first_name as string,
                last_name: r.p_last_name as string,
                date_of_birth: r.p_date_of_birth as string,
                created_at: Number(r.p_created_at),
                updated_at: Number(r.p_updated_at),
              },
      });
    }
  }
  return out;
}

/** A document's fields in its encounter's summary. */
export type DocumentSummaryRow = Pick<
  DocumentRow,
  'id' | 'encounter_id' | 'schema_type' | 'title' | 'status' | 'workflow_variant' | 'audio_duration_seconds'
>;

/** Public documents of the encounters, by encounter, each list in created_at (then id) order. */
export async function documentSummarySources(
  tx: Tx,
  encounterIds: readonly string[],
): Promise<Map<string, DocumentSummaryRow[]>> {
  const byEncounter = new Map<string, DocumentSummaryRow[]>();
  for (const batch of chunks(encounterIds)) {
    const rows = await tx
      .selectFrom('documents as d')
      .innerJoin('encounters as e', (join) =>
        join.onRef('e.id', '=', 'd.encounter_id').onRef('e.organization_id', '=', 'd.organization_id'),
      )
      .select([
        'd.id',
        'd.encounter_id',
        'd.schema_type',
        'd.title',
        'd.status',
        'd.workflow_variant',
        'd.audio_duration_seconds',
      ])
      .where('d.encounter_id', 'in', batch)
      .where('d.schema_type', 'in', PUBLIC_SCHEMA_TYPES)
      .orderBy('d.encounter_id')
      .orderBy('d.created_at')
      .orderBy('d.id')
      .execute();
    for (const row of rows) {
      const list = byEncounter.get(row.encounter_id);
      if (list) list.push(row);
      else byEncounter.set(row.encounter_id, [row]);
    }
  }
  return byEncounter;
}

export interface DocumentSource {
  document: DocumentRow;
  transcript: TranscriptRow | undefined;
}

export async function documentSources(tx: Tx, documentIds: readonly string[]): Promise<DocumentSource[]> {
  const out: DocumentSource[] = [];
  for (const batch of chunks(documentIds)) {
    const rows = await tx
      .selectFrom('documents as d')
      .leftJoin('transcripts as t', 't.document_id', 'd.id')
      .select([
        'd.id',
        'd.encounter_id',
        'd.organization_id',
        'd.schema_type',
        'd.title',
        'd.status',
        'd.workflow_variant',
        'd.audio_duration_seconds',
        'd.content_format',
        'd.content_text',
        'd.created_at',
        'd.updated_at',
        't.document_id as t_document_id',
        't.finalized as t_finalized',
        't.provider as t_provider',
        't.audio_duration_seconds as t_audio_duration_seconds',
        't.turns as t_turns',
        't.finalized_at as t_finalized_at',
      ])
      .where('d.id', 'in', batch)
      .execute();
    for (const r of rows) {
      out.push({
        document: {
          id: r.id,
          encounter_id: r.encounter_id,
          organization_id: r.organization_id,
          schema_type: r.schema_type,
          title: r.title,
          status: r.status,
          workflow_variant: r.workflow_variant,
          audio_duration_seconds: r.audio_duration_seconds,
          content_format: r.content_format,
          content_text: r.content_text,
          created_at: Number(r.created_at),
          updated_at: Number(r.updated_at),
        },
        transcript:
          r.t_document_id === null
            ? undefined
            : {
                document_id: r.t_document_id,
                finalized: r.t_finalized as TranscriptRow['finalized'],
                provider: r.t_provider,
                audio_duration_seconds: r.t_audio_duration_seconds,
                turns: r.t_turns as string,
                finalized_at: r.t_finalized_at === null ? null : Number(r.t_finalized_at),
              },
      });
    }
  }
  return out;
}

/** Encounters whose summary shows one of these patients. */
export async function encounterIdsOfPatients(tx: Tx, patientIds: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const batch of chunks(patientIds)) {
    const rows = await tx.selectFrom('encounters').select('id').where('patient_id', 'in', batch).execute();
    for (const r of rows) out.push(r.id);
  }
  return out;
}

/**
 * Encounters whose summary lists (or listed) one of these documents: its encounter now and, for
 * a document a re-import moved, the one its stored answer still names.
 */
export async function encounterIdsOfDocuments(tx: Tx, documentIds: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const batch of chunks(documentIds)) {
    const now = await tx.selectFrom('documents').select('encounter_id').where('id', 'in', batch).execute();
    const stored = await tx
      .selectFrom('document_reads')
      .select('encounter_id')
      .where('document_id', 'in', batch)
      .execute();
    for (const r of now) out.push(r.encounter_id);
    for (const r of stored) out.push(r.encounter_id);
  }
  return out;
}

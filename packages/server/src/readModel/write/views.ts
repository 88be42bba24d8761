/** Store rows → the contract's response shapes (exactly its fields; null, never omitted). */
import type {
  DocumentDetailBody,
  DocumentSummaryBody,
  EncounterBody,
  SchemaType,
  TranscriptBody,
} from '../../contract/schemas.js';
import type { DocumentRow, EncounterRow, PatientRow, TranscriptRow } from '../../database/schema.js';
import { toIso } from '../../time.js';
import type { DocumentSummaryRow } from './sources.js';

export function toDocumentSummary(row: DocumentSummaryRow): DocumentSummaryBody {
  const isDocument = row.schema_type === 'document';
  return {
    document_id: row.id,
    // Summaries are read for the served schema types only (sources.ts).
    schema_type: row.schema_type as SchemaType,
    title: row.title,
    status: isDocument ? null : row.status,
    workflow_variant: isDocument ? null : row.workflow_variant,
    audio_duration_seconds: isDocument ? null : row.audio_duration_seconds,
  };
}

/** An encounter with its patient and its public documents: what its summary shows. */
export interface EncounterView {
  encounter: EncounterRow;
  patient: PatientRow;
  documents: DocumentSummaryRow[];
}

export function toEncounterBody({ encounter, patient, documents }: EncounterView): EncounterBody {
  return {
    encounter_id: encounter.id,
    organization_id: encounter.organization_id,
    encounter_type: encounter.encounter_type,
    status: encounter.status,
    created_at: toIso(encounter.created_at),
    updated_at: toIso(encounter.updated_at),
    date_of_service: toIso(encounter.date_of_service),
    patient: {
      patient_id: patient.id,
      first_name: patient.first_name,
      last_name: patient.last_name,
      date_of_birth: patient.date_of_birth,
    },
    documents: documents.map(toDocumentSummary),
  };
}

export function toDocumentDetail(row: DocumentRow): DocumentDetailBody {
  const isDocument = row.schema_type === 'document';
  const metadata = {
    document_id: row.id,
    encounter_id: row.encounter_id,
    schema_type: row.schema_type,
    title: row.title,
    status: isDocument ? null : row.status,
    workflow_variant: isDocument ? null : row.workflow_variant,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
  // Only a `document` carries content; an ambient transcript's detail is metadata only.
  if (!isDocument) return { ...metadata, schema_type: 'ambient_transcript' };
  return {
    ...metadata,
    schema_type: 'document',
    // The importer takes markdown only, so the stored format is the schema's one value.
    content: { format: (row.content_format ?? 'markdown') as 'markdown', text: row.content_text ?? '' },
  };
}

export function toTranscriptBody(document: DocumentRow, transcript: TranscriptRow): TranscriptBody {
  return {
    encounter_id: document.encounter_id,
    document_id: document.id,
    transcript: {
      provider: transcript.provider ?? '',
      audio_duration_seconds: transcript.audio_duration_seconds ?? document.audio_duration_seconds ?? 0,
      // Exactly the contract's keys of each turn, as the response schema used to keep them.
      turns: (JSON.parse(transcript.turns) as TranscriptBody['transcript']['turns']).map((t) => ({
        speaker: t.speaker,
        start: t.start,
        end: t.end,
        text: t.text,
      })),
    },
  };
}

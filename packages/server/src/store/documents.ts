/**
 * The audio route's read: the encounter's access flags, the document and its recording, in one
 * statement (the detail and transcript routes answer from the read model, readModel/read/keys.ts).
 * Everything but the flags is joined only within the caller's organization and only for a
 * listable encounter, so another organization's data is never read.
 */
import { type Kysely, sql } from 'kysely';
import type { Db } from '../database/connection.js';
import { classifyEncounter, type EncounterAccess, ownFlag } from '../database/encounterAccess.js';
import { preparedQuery } from '../database/preparedQuery.js';
import type { Database, DocumentRow, RecordingRow } from '../database/schema.js';
import { isStorableId } from '../database/storableId.js';
import { unplannedText } from '../database/unplannedValue.js';

/**
 * The document asked for, when the encounter is the caller's. A document that exists under
 * another encounter (of any organization) is absent here (decisions.md).
 */
export interface DocumentInEncounter {
  /** The encounter's patient: whose recording a link would open. */
  patientId: string;
  document: DocumentRow | undefined;
  /** When the document has one. */
  recording: RecordingRow | undefined;
}

export async function findDocumentAccess(
  db: Db,
  organizationId: string,
  encounterId: string,
  documentId: string,
): Promise<EncounterAccess<DocumentInEncounter>> {
  if (!isStorableId(encounterId)) return { status: 'absent' };
  // An ID no database could hold matches no document; the encounter is still classified.
  const wanted = isStorableId(documentId) ? documentId : '';
  const [row] = await withRecording(db, encounterId, wanted, organizationId);
  if (!row) return { status: 'absent' };
  const access = classifyEncounter(row, null);
  if (access.status !== 'found') return access;
  return {
    status: 'found',
    encounter: {
      patientId: row.c_patient_id as string,
      document: documentOf(row),
      recording: recordingOf(row),
    },
  };
}

/** Any organization's encounter `e` for its flags; `c`, the same when it is the caller's and listable. */
function documentJoin(db: Kysely<Database>, encounterId: string, documentId: string, organizationId: string) {
  return db
    .selectFrom('encounters as e')
    .leftJoin('encounters as c', (join) =>
      join
        .onRef('c.id', '=', 'e.id')
        .on('c.organization_id', '=', unplannedText(db, organizationId))
        .on('c.demo_training', '=', sql.lit(0)),
    )
    .leftJoin('documents as d', (join) =>
      join
        .on('d.id', '=', unplannedText(db, documentId))
        .onRef('d.encounter_id', '=', 'c.id')
        .on('d.organization_id', '=', unplannedText(db, organizationId)),
    )
    .select([
      ownFlag(db, 'e.organization_id', organizationId).as('own'),
      'e.demo_training as demo_training',
      'c.patient_id as c_patient_id',
      'd.id as d_id',
      'd.encounter_id as d_encounter_id',
      'd.organization_id as d_organization_id',
      'd.schema_type as d_schema_type',
      'd.title as d_title',
      'd.status as d_status',
      'd.workflow_variant as d_workflow_variant',
      'd.audio_duration_seconds as d_audio_duration_seconds',
      'd.content_format as d_content_format',
      'd.content_text as d_content_text',
      'd.created_at as d_created_at',
      'd.updated_at as d_updated_at',
    ])
    .where('e.id', '=', unplannedText(db, encounterId));
}

/** The audio link's statement (exported so a test can read its SQL). */
export function recordingReadQuery(db: Db, encounterId: string, documentId: string, organizationId: string) {
  return documentJoin(db, encounterId, documentId, organizationId)
    .leftJoin('recordings as r', 'r.document_id', 'd.id')
    .select([
      'r.document_id as r_document_id',
      'r.object_key as r_object_key',
      'r.content_type as r_content_type',
      'r.byte_size as r_byte_size',
    ]);
}

const withRecording = preparedQuery(recordingReadQuery, { turnBatched: true });

/** A row of the audio link's query, as the row builder gives it. */
type JoinedRow = Partial<Record<string, unknown>>;

function documentOf(r: JoinedRow): DocumentRow | undefined {
  if (r.d_id == null) return undefined;
  return {
    id: r.d_id as string,
    encounter_id: r.d_encounter_id as string,
    organization_id: r.d_organization_id as string,
    schema_type: r.d_schema_type as string,
    title: r.d_title as string,
    status: r.d_status as string | null,
    workflow_variant: r.d_workflow_variant as string | null,
    audio_duration_seconds: r.d_audio_duration_seconds as number | null,
    content_format: r.d_content_format as string | null,
    content_text: r.d_content_text as string | null,
    created_at: r.d_created_at as number,
    updated_at: r.d_updated_at as number,
  };
}

function recordingOf(r: JoinedRow): RecordingRow | undefined {
  if (r.r_document_id == null) return undefined;
  return {
    document_id: r.r_document_id as string,
    object_key: r.r_object_key as string,
    content_type: r.r_content_type as string,
    byte_size: r.r_byte_size as number | null,
  };
}

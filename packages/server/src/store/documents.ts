/** Document, transcript and recording reads, always within the caller's organization. */
import type { Db } from './database.js';
import { isStorableId } from './encounters.js';
import type { DocumentRow, RecordingRow, TranscriptRow } from './schema.js';

/**
 * A document of the given encounter in the caller's organization. A document that exists under
 * another encounter (of any organization) is absent here (decisions.md).
 */
export async function findDocument(
  db: Db,
  organizationId: string,
  encounterId: string,
  documentId: string,
): Promise<DocumentRow | undefined> {
  if (!isStorableId(documentId)) return undefined;
  return db
    .selectFrom('documents')
    .selectAll()
    .where('id', '=', documentId)
    .where('encounter_id', '=', encounterId)
    .where('organization_id', '=', organizationId)
    .executeTakeFirst();
}

export async function findTranscript(
  db: Db,
  organizationId: string,
  documentId: string,
): Promise<TranscriptRow | undefined> {
  return db
    .selectFrom('transcripts as t')
    .innerJoin('documents as d', 'd.id', 't.document_id')
    .selectAll('t')
    .where('t.document_id', '=', documentId)
    .where('d.organization_id', '=', organizationId)
    .executeTakeFirst();
}

export async function findRecording(
  db: Db,
  organizationId: string,
  documentId: string,
): Promise<RecordingRow | undefined> {
  return db
    .selectFrom('recordings as r')
    .innerJoin('documents as d', 'd.id', 'r.document_id')
    .selectAll('r')
    .where('r.document_id', '=', documentId)
    .where('d.organization_id', '=', organizationId)
    .executeTakeFirst();
}

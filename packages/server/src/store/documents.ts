/** Document, transcript and recording reads, always within the caller's organization. */
import type { Db } from './database.js';
import { isStorableId } from './encounters.js';
import { preparedQuery } from './preparedQuery.js';
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
  return (await documentById(db, documentId, encounterId, organizationId))[0];
}

const documentById = preparedQuery((db, documentId: string, encounterId: string, organizationId: string) =>
  db
    .selectFrom('documents')
    .selectAll()
    .where('id', '=', documentId)
    .where('encounter_id', '=', encounterId)
    .where('organization_id', '=', organizationId),
);

export async function findTranscript(
  db: Db,
  organizationId: string,
  documentId: string,
): Promise<TranscriptRow | undefined> {
  return (await transcriptByDocument(db, documentId, organizationId))[0];
}

const transcriptByDocument = preparedQuery((db, documentId: string, organizationId: string) =>
  db
    .selectFrom('transcripts as t')
    .innerJoin('documents as d', 'd.id', 't.document_id')
    .selectAll('t')
    .where('t.document_id', '=', documentId)
    .where('d.organization_id', '=', organizationId),
);

export async function findRecording(
  db: Db,
  organizationId: string,
  documentId: string,
): Promise<RecordingRow | undefined> {
  return (await recordingByDocument(db, documentId, organizationId))[0];
}

const recordingByDocument = preparedQuery((db, documentId: string, organizationId: string) =>
  db
    .selectFrom('recordings as r')
    .innerJoin('documents as d', 'd.id', 'r.document_id')
    .selectAll('r')
    .where('r.document_id', '=', documentId)
    .where('d.organization_id', '=', organizationId),
);

/**
 * The document routes' rules: detail and transcript from the read model's stored answers, and the
 * audio link, each in the contract's check order.
 */
import type { Caller } from '../auth/verifyApiKey.js';
import type { AudioLinkBody } from '../contract/schemas.js';
import type { Db } from '../database/connection.js';
import { classifyEncounter } from '../database/encounterAccess.js';
import { isStorableId } from '../database/storableId.js';
import { type MediaStorage, StorageUnavailableError } from '../media/storage.js';
import { documentDetailRead, transcriptRead } from '../readModel/read/keys.js';
import { findDocumentAccess } from '../store/documents.js';
import { toIso } from '../time.js';
import { granted } from './encounters.js';
import { ApiError } from './errors.js';
import { StoredAnswer } from './storedAnswer.js';

type StoredDocumentRead = Awaited<ReturnType<typeof documentDetailRead>>[number];

/**
 * The contract's checks, in its order, on a row of the read model: the encounter's access, then
 * the document within it. Returns the row with the document present.
 */
function requireStoredDocument(
  row: StoredDocumentRead | undefined,
): StoredDocumentRead & { patient_id: string; document_id: string; schema_type: string } {
  const found = granted(row ? classifyEncounter(row, row) : { status: 'absent' });
  if (found.document_id === null || found.schema_type === null) throw documentNotFound();
  // Found: the caller's listable encounter, so its patient was joined.
  return found as StoredDocumentRead & { patient_id: string; document_id: string; schema_type: string };
}

function documentNotFound(): ApiError {
  return new ApiError('document_not_found', 'No document with this ID exists in this encounter.');
}

function onlyAmbientTranscripts(): ApiError {
  return new ApiError('unsupported_document_type', 'This route serves ambient_transcript documents only.');
}

/** An ID no database could hold matches no document; the encounter is still classified. */
function storableDocumentId(documentId: string): string {
  return isStorableId(documentId) ? documentId : '';
}

export async function getDocument(
  db: Db,
  caller: Caller,
  encounterId: string,
  documentId: string,
): Promise<StoredAnswer> {
  const [row] = isStorableId(encounterId)
    ? await documentDetailRead(db, encounterId, storableDocumentId(documentId), caller.organizationId)
    : [];
  const found = requireStoredDocument(row);
  // The read model stores a detail only for the schema types the API shows.
  if (found.body === null || found.etag === null) {
    throw new ApiError('unsupported_document_type', 'This document type is not available through the API.');
  }
  return new StoredAnswer(`{"document":${found.body}}`, found.etag, [found.patient_id]);
}

export async function getTranscript(
  db: Db,
  caller: Caller,
  encounterId: string,
  documentId: string,
): Promise<StoredAnswer> {
  const [row] = isStorableId(encounterId)
    ? await transcriptRead(db, encounterId, storableDocumentId(documentId), caller.organizationId)
    : [];
  const found = requireStoredDocument(row);
  if (found.schema_type !== 'ambient_transcript') throw onlyAmbientTranscripts();
  // Stored only for a finalized transcript.
  if (found.body === null || found.etag === null) {
    throw new ApiError('transcript_not_found', 'This document has no finalized transcript.');
  }
  return new StoredAnswer(found.body, found.etag, [found.patient_id]);
}

export interface AudioDeps {
  media: MediaStorage;
  linkTtlSeconds: number;
}

/** The link, and the patient whose recording it opens (for the audit). */
export interface AudioAnswer {
  body: AudioLinkBody;
  disclosedPatientIds: readonly string[];
}

export async function getAudioLink(
  db: Db,
  deps: AudioDeps,
  caller: Caller,
  encounterId: string,
  documentId: string,
): Promise<AudioAnswer> {
  const found = granted(await findDocumentAccess(db, caller.organizationId, encounterId, documentId));
  const { document, recording } = found;
  if (!document) throw documentNotFound();
  if (document.schema_type !== 'ambient_transcript') throw onlyAmbientTranscripts();
  if (!recording) {
    throw new ApiError('audio_not_available_for_document', 'This document has no recording.');
  }
  try {
    if (!(await deps.media.exists(recording.object_key))) {
      throw new ApiError('audio_not_found', 'The recording for this document is no longer in storage.');
    }
    const link = await deps.media.createLink(
      recording.object_key,
      recording.content_type,
      deps.linkTtlSeconds,
    );
    return {
      body: { audio_url: link.url, expires_at: toIso(link.expiresAt) },
      disclosedPatientIds: [found.patientId],
    };
  } catch (error) {
    if (error instanceof StorageUnavailableError) {
      throw new ApiError('audio_storage_unavailable', 'Audio storage is temporarily unavailable.');
    }
    throw error;
  }
}

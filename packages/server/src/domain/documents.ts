/**
 * The document routes' rules: detail, transcript and audio link, in the contract's order. Each
 * answer comes with the patient whose data it carries (disclosure accounting).
 */
import type { Caller } from '../auth/verifyApiKey.js';
import type { AudioLinkBody, DocumentDetailBody, TranscriptBody } from '../contract/schemas.js';
import { type MediaStorage, StorageUnavailableError } from '../media/storage.js';
import type { Db } from '../store/database.js';
import { type DocumentInEncounter, findDocumentAccess } from '../store/documents.js';
import { PUBLIC_SCHEMA_TYPES } from '../store/encounters.js';
import { toIso } from '../time.js';
import { granted } from './encounters.js';
import { ApiError } from './errors.js';
import { toDocumentDetail, toTranscriptBody } from './views.js';

async function requireDocument(
  db: Db,
  caller: Caller,
  encounterId: string,
  documentId: string,
  also?: 'transcript' | 'recording',
): Promise<DocumentInEncounter & { document: NonNullable<DocumentInEncounter['document']> }> {
  const found = granted(await findDocumentAccess(db, caller.organizationId, encounterId, documentId, also));
  const { document } = found;
  if (!document)
    throw new ApiError('document_not_found', 'No document with this ID exists in this encounter.');
  return { ...found, document };
}

/** An answer body and the patients whose data it carries. */
export interface Disclosed<Body> {
  body: Body;
  patientIds: readonly string[];
}

async function requireAmbientTranscript(
  db: Db,
  caller: Caller,
  encounterId: string,
  documentId: string,
  also: 'transcript' | 'recording',
) {
  const found = await requireDocument(db, caller, encounterId, documentId, also);
  if (found.document.schema_type !== 'ambient_transcript') {
    throw new ApiError('unsupported_document_type', 'This route serves ambient_transcript documents only.');
  }
  return found;
}

export async function getDocument(
  db: Db,
  caller: Caller,
  encounterId: string,
  documentId: string,
): Promise<Disclosed<DocumentDetailBody>> {
  const { document, patientId } = await requireDocument(db, caller, encounterId, documentId);
  if (!(PUBLIC_SCHEMA_TYPES as readonly string[]).includes(document.schema_type)) {
    throw new ApiError('unsupported_document_type', 'This document type is not available through the API.');
  }
  return { body: toDocumentDetail(document), patientIds: [patientId] };
}

export async function getTranscript(
  db: Db,
  caller: Caller,
  encounterId: string,
  documentId: string,
): Promise<Disclosed<TranscriptBody>> {
  const { document, transcript, patientId } = await requireAmbientTranscript(
    db,
    caller,
    encounterId,
    documentId,
    'transcript',
  );
  if (!transcript || transcript.finalized !== 1) {
    throw new ApiError('transcript_not_found', 'This document has no finalized transcript.');
  }
  return { body: toTranscriptBody(document, transcript), patientIds: [patientId] };
}

export interface AudioDeps {
  media: MediaStorage;
  linkTtlSeconds: number;
}

export async function getAudioLink(
  db: Db,
  deps: AudioDeps,
  caller: Caller,
  encounterId: string,
  documentId: string,
): Promise<Disclosed<AudioLinkBody>> {
  const { recording, patientId } = await requireAmbientTranscript(
    db,
    caller,
    encounterId,
    documentId,
    'recording',
  );
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
    return { body: { audio_url: link.url, expires_at: toIso(link.expiresAt) }, patientIds: [patientId] };
  } catch (error) {
    if (error instanceof StorageUnavailableError) {
      throw new ApiError('audio_storage_unavailable', 'Audio storage is temporarily unavailable.');
    }
    throw error;
  }
}

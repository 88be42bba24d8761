/**
 * Copies an import's audio into the media store before its transaction. Keys are
 * content-addressed (`recordings/<document>/<sha-256 of the bytes>.<ext>`): a re-import of the
 * same file lands on the same keys (idempotent), and different bytes never overwrite an object
 * that committed rows still point at, so a failed import cannot damage existing recordings.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { extname } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { isSafeObjectKey, type MediaStorage } from '../media/storage.js';
import type { AudioSource } from './validateImport.js';

export interface StoredAudio {
  readonly objectKey: string;
  readonly contentType: string;
  readonly byteSize: number | null;
}

const PARALLEL_COPIES = 4;

/** A folder name for the document: its id when that is a safe key segment, else a hash of it. */
export function recordingFolder(documentId: string): string {
  return /^[A-Za-z0-9_-]{1,128}$/.test(documentId)
    ? documentId
    : `h${createHash('sha256').update(documentId).digest('hex').slice(0, 32)}`;
}

/** Where a recording that is deliberately absent from storage points (`"audio":{"missing":true}`). */
export function missingRecordingKey(documentId: string): string {
  return `recordings/${recordingFolder(documentId)}/missing-from-storage.wav`;
}

export async function copyAudio(
  media: MediaStorage,
  sources: readonly AudioSource[],
): Promise<Map<string, StoredAudio>> {
  const stored = new Map<string, StoredAudio>();
  let next = 0;
  const worker = async () => {
    while (next < sources.length) {
      const source = sources[next++]!;
      stored.set(source.documentId, await copyOne(media, source));
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_COPIES, sources.length) }, worker));
  return stored;
}

async function copyOne(media: MediaStorage, source: AudioSource): Promise<StoredAudio> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(source.path), hash);
  const ext = extname(source.path).toLowerCase();
  const suffix = /^\.[a-z0-9]{1,8}$/.test(ext) ? ext : '';
  const objectKey = `recordings/${recordingFolder(source.documentId)}/${hash.digest('hex').slice(0, 40)}${suffix}`;
  if (!isSafeObjectKey(objectKey)) throw new Error(`internal: unsafe object key ${objectKey}`);
  const { byteSize } = await media.put(objectKey, source.path, source.contentType);
  return { objectKey, contentType: source.contentType, byteSize };
}

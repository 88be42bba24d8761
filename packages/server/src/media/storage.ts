/**
 * Where recordings live. Drivers: `local` (a folder, served by the embedded media host) and
 * `s3` (any S3-compatible store, links presigned). Import, the demo and the audio route all go
 * through this interface.
 */
import type { Readable } from 'node:stream';

export interface MediaLink {
  readonly url: string;
  /** Epoch milliseconds; exactly the link's own expiry (a whole second). */
  readonly expiresAt: number;
}

export interface MediaStorage {
  readonly driver: 'local' | 's3';
  /** Stores an object from a file path or a stream; returns its size in bytes. */
  put(key: string, source: string | Readable, contentType: string): Promise<{ byteSize: number }>;
  /**
   * Whether the object exists. Answers within the configured storage timeout or throws
   * StorageUnavailableError, as it does when storage cannot be read at all.
   */
  exists(key: string): Promise<boolean>;
  /**
   * A signed link to the object, valid for `ttlSeconds` from now. Does not check that the object
   * exists (call `exists` first). Throws StorageUnavailableError when signing needs storage (or
   * its credentials) and they do not answer in time.
   */
  createLink(key: string, contentType: string, ttlSeconds: number): Promise<MediaLink>;
  close?(): Promise<void>;
}

/** Storage could not be reached or did not answer in time (→ 503 audio_storage_unavailable). */
export class StorageUnavailableError extends Error {
  override name = 'StorageUnavailableError';
}

/** An object opened for reading by the embedded media host. */
export interface OpenedObject {
  readonly size: number;
  readonly modifiedMs: number;
  /** Streams the bytes `start..end` (inclusive; the whole object without a range), then closes. */
  read(range?: { start: number; end: number }): Readable;
  /** Closes the object without reading it (HEAD, errors). Safe to call more than once. */
  close(): Promise<void>;
}

/** A driver whose objects the embedded media host serves (the local folder). */
export interface ServableMediaStorage extends MediaStorage {
  readonly driver: 'local';
  /**
   * Opens the object for reading: null when it is gone (or the key is unsafe). Bounded like
   * `exists`; throws StorageUnavailableError when the folder cannot be read.
   */
  open(key: string): Promise<OpenedObject | null>;
  /**
   * Links point at this base URL from now on: used when the media host listens on an
   * ephemeral port that the configured base URL could not know.
   */
  useBaseUrl(url: string): void;
}

export function isServable(media: MediaStorage): media is ServableMediaStorage {
  return media.driver === 'local' && typeof (media as Partial<ServableMediaStorage>).open === 'function';
}

/** Object keys are relative, slash-separated, without `.`/`..` segments or odd characters. */
export function isSafeObjectKey(key: string): boolean {
  return (
    key.length > 0 &&
    key.length <= 512 &&
    /^[A-Za-z0-9._\-/]+$/.test(key) &&
    !key.startsWith('/') &&
    key.split('/').every((part) => part !== '' && part !== '.' && part !== '..')
  );
}

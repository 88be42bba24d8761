/**
 * Recordings in any S3-compatible object store (AWS S3, MinIO, Ceph, R2, ...) through the AWS
 * SDK v3. Links are presigned GetObject URLs (SigV4 query signing): the store itself serves the
 * bytes, ranges included, and checks signature and expiry.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { PRIVATE_FILE_MODE } from '../privateFiles.js';
import { withinStorageTimeout } from './bounded.js';
import { servableContentType } from './contentType.js';
import { isSafeObjectKey, type MediaLink, type MediaStorage, StorageUnavailableError } from './storage.js';

export interface S3StorageOptions {
  bucket: string;
  region: string;
  /** For stores other than AWS; undefined means AWS's own endpoint for the region. */
  endpoint: string | undefined;
  forcePathStyle: boolean;
  /** Both or neither; neither means the SDK's default chain (environment, profile, role). */
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
  /** Folder inside the bucket, without leading or trailing slash ('' for the bucket root). */
  prefix: string;
  /** Bound on `exists` and `createLink` (config.media.storageTimeoutMs). */
  timeoutMs: number;
  now?: () => number;
}

/** Uploads may be long; a socket silent for this long is a dead upload. */
const UPLOAD_IDLE_TIMEOUT_MS = 30_000;

export function createS3Storage(options: S3StorageOptions): MediaStorage {
  const now = options.now ?? Date.now;
  const credentials =
    options.accessKeyId && options.secretAccessKey
      ? { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey }
      : undefined;
  const client = new S3Client({
    region: options.region,
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    forcePathStyle: options.forcePathStyle,
    ...(credentials ? { credentials } : {}),
    // Checksums only where S3 requires them: several S3-compatible stores reject the newer
    // default checksum headers.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: {
      connectionTimeout: options.timeoutMs,
      requestTimeout: Math.max(options.timeoutMs, UPLOAD_IDLE_TIMEOUT_MS),
    },
  });
  const prefix = options.prefix.replace(/^\/+|\/+$/g, '');
  const objectKey = (key: string): string => {
    if (!isSafeObjectKey(key)) throw new Error('unsafe object key');
    return prefix === '' ? key : `${prefix}/${key}`;
  };

  return {
    driver: 's3',

    async put(key, source, contentType) {
      const Key = objectKey(key);
      // PutObject needs the length up front; a stream of unknown length is spooled to a file.
      const spool = typeof source === 'string' ? undefined : await spoolToFile(source);
      const path = typeof source === 'string' ? source : (spool?.path ?? '');
      try {
        const byteSize = (await stat(path)).size;
        await client.send(
          new PutObjectCommand({
            Bucket: options.bucket,
            Key,
            Body: createReadStream(path),
            ContentLength: byteSize,
            ContentType: contentType,
          }),
        );
        return { byteSize };
      } finally {
        await spool?.remove();
      }
    },

    async exists(key) {
      if (!isSafeObjectKey(key)) return false;
      try {
        await withinStorageTimeout(options.timeoutMs, 'object store', (abortSignal) =>
          client.send(new HeadObjectCommand({ Bucket: options.bucket, Key: objectKey(key) }), {
            abortSignal,
          }),
        );
        return true;
      } catch (error) {
        if (error instanceof StorageUnavailableError) throw error;
        if (httpStatusOf(error) === 404) return false;
        throw new StorageUnavailableError(`object store error (${describe(error)})`);
      }
    },

    async createLink(key, contentType, ttlSeconds): Promise<MediaLink> {
      // Signed from a whole second, so the expiry is exactly signing time + ttl.
      const signedAtSeconds = Math.floor(now() / 1000);
      const command = new GetObjectCommand({
        Bucket: options.bucket,
        Key: objectKey(key),
        // Same answer headers as the embedded host; both are covered by the signature.
        ResponseContentType: servableContentType(contentType),
        ResponseCacheControl: 'private, no-store',
      });
      try {
        // Presigning is local, but resolving default-chain credentials may ask the network.
        const url = await withinStorageTimeout(options.timeoutMs, 'object store credentials', () =>
          getSignedUrl(client, command, {
            expiresIn: ttlSeconds,
            signingDate: new Date(signedAtSeconds * 1000),
          }),
        );
        return { url, expiresAt: (signedAtSeconds + ttlSeconds) * 1000 };
      } catch (error) {
        if (error instanceof StorageUnavailableError) throw error;
        throw new StorageUnavailableError(`object store link signing failed (${describe(error)})`);
      }
    },

    async close() {
      client.destroy();
    },
  };
}

function httpStatusOf(error: unknown): number | undefined {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } } | undefined;
  if (e?.name === 'NotFound' || e?.name === 'NoSuchKey') return 404;
  return e?.$metadata?.httpStatusCode;
}

/** Name, status and errno code only: SDK messages can echo request details. */
function describe(error: unknown): string {
  const e = error as { name?: string; code?: string } | undefined;
  const status = httpStatusOf(error);
  return [e?.name ?? 'Error', status === undefined ? undefined : `HTTP ${status}`, e?.code]
    .filter((part) => part !== undefined)
    .join(', ');
}

async function spoolToFile(source: Readable): Promise<{ path: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'eds-upload-'));
  const remove = () => rm(dir, { recursive: true, force: true });
  const path = join(dir, 'object');
  try {
    await pipeline(source, createWriteStream(path, { mode: PRIVATE_FILE_MODE }));
  } catch (error) {
    await remove();
    throw error;
  }
  return { path, remove };
}

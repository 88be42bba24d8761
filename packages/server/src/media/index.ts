import type { Config } from '../config.js';
import { createLocalStorage } from './localStorage.js';
import type { S3StorageOptions } from './s3Storage.js';
import { type MediaStorage, StorageUnavailableError } from './storage.js';

/**
 * The storage driver the configuration names. `now` is the clock links are signed with
 * (default Date.now); pass the services' clock so link expiry and the host's checks agree.
 */
export function createMediaStorage(config: Config, now?: () => number): MediaStorage {
  const storage = config.media.storage;
  const timeoutMs = config.media.storageTimeoutMs;
  if (storage.driver === 'local') {
    return createLocalStorage({
      dir: storage.dir,
      mediaBaseUrl: config.mediaBaseUrl,
      signingSecret: config.secrets.mediaSigning,
      timeoutMs,
      ...(now ? { now } : {}),
    });
  }
  return lazyS3Storage({ ...storage, timeoutMs, ...(now ? { now } : {}) });
}

/**
 * The AWS SDK costs about 25 MB of memory once loaded: a process on local storage never loads
 * it. On S3 it starts loading in the background at start-up, so the first link does not wait
 * for it; a failed load is reported as storage unavailable and tried again at the next call.
 */
function lazyS3Storage(options: S3StorageOptions): MediaStorage {
  let loaded: Promise<MediaStorage> | undefined;
  const storage = () => {
    loaded ??= import('./s3Storage.js').then(
      (module) => module.createS3Storage(options),
      (error: unknown) => {
        loaded = undefined;
        throw new StorageUnavailableError(`S3 driver could not be loaded: ${(error as Error).message}`);
      },
    );
    return loaded;
  };
  storage().catch(() => {});
  return {
    driver: 's3',
    put: async (key, source, contentType) => (await storage()).put(key, source, contentType),
    exists: async (key) => (await storage()).exists(key),
    createLink: async (key, contentType, ttlSeconds) =>
      (await storage()).createLink(key, contentType, ttlSeconds),
    close: async () => {
      const current = await loaded?.catch(() => undefined);
      await current?.close?.();
    },
  };
}

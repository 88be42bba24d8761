import type { Config } from '../config.js';
import { createLocalStorage } from './localStorage.js';
import { createS3Storage } from './s3Storage.js';
import type { MediaStorage } from './storage.js';

export { type MediaHost, startMediaHost } from './mediaHost.js';
export {
  isServable,
  type MediaLink,
  type MediaStorage,
  type ServableMediaStorage,
  StorageUnavailableError,
} from './storage.js';

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
  return createS3Storage({ ...storage, timeoutMs, ...(now ? { now } : {}) });
}

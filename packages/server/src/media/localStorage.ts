/**
 * The embedded default: recordings as files in one folder, links pointing at the embedded media
 * host. The folder is created when the driver is; if it later vanishes, stops being a folder or
 * cannot be read, that is "storage unavailable", never "object gone".
 */
import { randomBytes } from 'node:crypto';
import { constants, createWriteStream, type Stats } from 'node:fs';
import { copyFile, type FileHandle, lstat, open, realpath, rename, rm, stat } from 'node:fs/promises';
import { dirname, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { makeFilePrivate, makePrivateDir, makePrivateDirAsync, PRIVATE_FILE_MODE } from '../privateFiles.js';
import { withinStorageTimeout } from './bounded.js';
import { servableContentType } from './contentType.js';
import { signMediaLink } from './linkSigner.js';
import {
  isSafeObjectKey,
  type MediaLink,
  type OpenedObject,
  type ServableMediaStorage,
  StorageUnavailableError,
} from './storage.js';

export interface LocalStorageOptions {
  dir: string;
  mediaBaseUrl: string;
  signingSecret: string;
  /** Bound on `exists` and `open` (config.media.storageTimeoutMs). */
  timeoutMs: number;
  now?: () => number;
}

/** Errors that mean "this object is not there", as opposed to "the folder cannot be read". */
const ABSENT = new Set(['ENOENT', 'ENOTDIR']);

export function createLocalStorage(options: LocalStorageOptions): ServableMediaStorage {
  const now = options.now ?? Date.now;
  const root = resolve(options.dir);
  let baseUrl = options.mediaBaseUrl;
  try {
    makePrivateDir(root);
  } catch {
    // Reported as StorageUnavailableError by the first read; the service still starts.
  }

  /** The file a key names, refusing anything that would leave the folder. */
  const pathOf = (key: string): string => {
    if (!isSafeObjectKey(key)) throw new Error('unsafe object key');
    const path = resolve(root, key);
    if (!path.startsWith(root + sep)) throw new Error('unsafe object key');
    return path;
  };

  /** After ENOENT/ENOTDIR: the object is gone only if the folder itself is still a folder. */
  const assertRootReadable = async (): Promise<void> => {
    let isDirectory: boolean;
    try {
      isDirectory = (await stat(root)).isDirectory();
    } catch (error) {
      throw unavailable(error);
    }
    if (!isDirectory) throw new StorageUnavailableError('media folder is not a folder');
  };

  /** Opens the key's file, following symlinks only while they stay inside the folder. */
  const openUnbounded = async (key: string): Promise<FileHandle | null> => {
    if (!isSafeObjectKey(key)) return null;
    let real: string;
    let realRoot: string;
    try {
      real = await realpath(pathOf(key));
      realRoot = await realpath(root);
    } catch (error) {
      if (!ABSENT.has(errorCode(error))) throw unavailable(error);
      await assertRootReadable();
      return null;
    }
    if (!real.startsWith(realRoot + sep)) return null;
    let handle: FileHandle;
    try {
      // O_NONBLOCK: a FIFO planted in the folder must not park a file-system thread forever
      // (no effect on regular files; anything but a regular file is then refused below).
      handle = await open(real, constants.O_RDONLY | constants.O_NONBLOCK);
    } catch (error) {
      if (ABSENT.has(errorCode(error))) return null;
      throw unavailable(error);
    }
    try {
      if ((await handle.stat()).isFile()) return handle;
    } catch (error) {
      await handle.close();
      throw unavailable(error);
    }
    await handle.close();
    return null;
  };

  // The folder's real path, for the link route's check; looked up again whenever a file's real
  // path falls outside it (the folder may have been replaced by a link since).
  let knownRealRoot: string | undefined;

  /**
   * What the link route needs before it signs: a regular file inside the folder. It is advisory:
   * the media host opens with every check, so a file this process cannot read, one reached
   * through a folder linked in from outside, or a folder re-pointed elsewhere since its real path
   * was kept, gets a link that the host then refuses (404/503), never its bytes.
   *
   * Each file-system call is a trip through libuv's thread pool, which on a busy machine costs
   * more than the rest of the route (docs/benchmarks.md). A regular file at the key's path, the
   * usual answer, takes one call (lstat); a symbolic link there takes the real-path walk.
   */
  const existsUnbounded = async (key: string): Promise<boolean> => {
    if (!isSafeObjectKey(key)) return false;
    const path = pathOf(key);
    let entry: Stats;
    try {
      entry = await lstat(path);
    } catch (error) {
      if (!ABSENT.has(errorCode(error))) throw unavailable(error);
      await assertRootReadable();
      return false;
    }
    if (entry.isFile()) return true;
    return entry.isSymbolicLink() && existsThroughLinks(path);
  };

  /** A symbolic link at `path`: true when it leads to a regular file inside the folder. */
  const existsThroughLinks = async (path: string): Promise<boolean> => {
    let real: string;
    let isFile: boolean;
    try {
      real = await realpath(path);
      isFile = (await stat(real)).isFile();
    } catch (error) {
      if (!ABSENT.has(errorCode(error))) throw unavailable(error);
      await assertRootReadable();
      return false;
    }
    if (knownRealRoot === undefined || !real.startsWith(knownRealRoot + sep)) {
      try {
        knownRealRoot = await realpath(root);
      } catch (error) {
        throw unavailable(error);
      }
    }
    return isFile && real.startsWith(knownRealRoot + sep);
  };

  const openBounded = (key: string, what: string) =>
    withinStorageTimeout(
      options.timeoutMs,
      what,
      () => openUnbounded(key),
      (late) => void late?.close().catch(() => {}),
    );

  return {
    driver: 'local',

    async put(key, source, _contentType) {
      // The content type is not stored: links carry the one recorded with the recording.
      const target = pathOf(key);
      await makePrivateDirAsync(dirname(target));
      // Write beside the target and rename, so a reader never sees half a file.
      const partial = `${target}.partial-${randomBytes(6).toString('hex')}`;
      const sink =
        typeof source === 'string'
          ? undefined
          : createWriteStream(partial, { flags: 'wx', mode: PRIVATE_FILE_MODE });
      try {
        if (sink) await pipeline(source as Readable, sink);
        else {
          // A copy takes its source's mode: a recording is patient data whatever the import's was.
          await copyFile(source as string, partial, constants.COPYFILE_EXCL);
          await makeFilePrivate(partial);
        }
        await rename(partial, target);
      } catch (error) {
        // The sink may still be opening its file: wait until it has closed, then remove it.
        if (sink && !sink.closed) await new Promise<void>((resolve) => sink.once('close', () => resolve()));
        await rm(partial, { force: true });
        throw error;
      }
      return { byteSize: (await stat(target)).size };
    },

    async exists(key) {
      return withinStorageTimeout(options.timeoutMs, 'media folder', () => existsUnbounded(key));
    },

    async open(key) {
      const handle = await openBounded(key, 'media folder');
      return handle === null ? null : await openedObject(handle);
    },

    async createLink(key, contentType, ttlSeconds): Promise<MediaLink> {
      if (!isSafeObjectKey(key)) throw new Error('unsafe object key');
      const expiresAt = (Math.floor(now() / 1000) + ttlSeconds) * 1000;
      const type = servableContentType(contentType);
      return { url: signMediaLink(baseUrl, key, type, expiresAt, options.signingSecret), expiresAt };
    },

    useBaseUrl(url) {
      baseUrl = url.replace(/\/+$/, '');
    },

    async close() {},
  };
}

async function openedObject(handle: FileHandle): Promise<OpenedObject> {
  let info: Awaited<ReturnType<FileHandle['stat']>>;
  try {
    info = await handle.stat();
  } catch (error) {
    await handle.close();
    throw unavailable(error);
  }
  let closed = false;
  return {
    size: info.size,
    modifiedMs: info.mtimeMs,
    read(range) {
      closed = true; // the stream owns the handle now and closes it when done or destroyed
      return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
    },
    async close() {
      if (closed) return;
      closed = true;
      await handle.close().catch(() => {});
    },
  };
}

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException | undefined)?.code ?? 'error';
}

function unavailable(error: unknown): StorageUnavailableError {
  // The code only: fs messages carry absolute paths, which do not belong in responses.
  return new StorageUnavailableError(`media folder unreadable (${errorCode(error)})`);
}

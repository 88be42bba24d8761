/**
 * Files that hold patient data or secrets (the SQLite database and its WAL, journal and shared
 * memory, media copies, generated secrets) are created readable by the service's user only:
 * files 0600, folders 0700 (decisions.md, Hardening). A mode given at creation can only lose
 * bits to the process umask, never gain them, so these hold whatever the umask.
 */
import { closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { chmod, mkdir } from 'node:fs/promises';

export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;

/** Creates the folder (and any missing parents) 0700; an existing folder is left as it is. */
export function makePrivateDir(path: string): void {
  mkdirSync(path, { recursive: true, mode: PRIVATE_DIR_MODE });
}

export async function makePrivateDirAsync(path: string): Promise<void> {
  await mkdir(path, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/**
 * Creates the file empty and 0600 unless it exists. SQLite then creates the database's WAL,
 * journal and shared-memory files with the database file's own mode.
 */
export function createPrivateFileIfAbsent(path: string): void {
  try {
    closeSync(openSync(path, 'wx', PRIVATE_FILE_MODE));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/** For a file whose mode came from elsewhere (a copy keeps its source's mode). */
export async function makeFilePrivate(path: string): Promise<void> {
  await chmod(path, PRIVATE_FILE_MODE);
}

export interface ExposedFile {
  readonly path: string;
  /** The permission bits, as `ls -l` would show them in octal (e.g. `644`). */
  readonly mode: string;
}

/** Of the given paths, those that exist and that the group or other users may read or change. */
export function exposedFiles(paths: readonly string[]): ExposedFile[] {
  const exposed: ExposedFile[] = [];
  for (const path of paths) {
    let mode: number;
    try {
      mode = statSync(path).mode & 0o777;
    } catch {
      continue;
    }
    if ((mode & 0o077) !== 0) exposed.push({ path, mode: mode.toString(8) });
  }
  return exposed;
}

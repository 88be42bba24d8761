/**
 * Folders a test writes files into, removed when the test file's process exits: a run of the
 * suite leaves nothing behind in the system's temporary folder. Each test file runs in a process
 * of its own, so every folder made here is gone once its file has finished.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let root: string | undefined;

/**
 * A new, empty folder inside this process's own one, so that a test writing beside its folder
 * (`../x`) still writes into something removed at exit.
 */
export function scratchDir(prefix: string): string {
  if (root === undefined) {
    const made = mkdtempSync(join(tmpdir(), 'eds-scratch-'));
    root = made;
    process.once('exit', () => rmSync(made, { recursive: true, force: true }));
  }
  return mkdtempSync(join(root, prefix));
}

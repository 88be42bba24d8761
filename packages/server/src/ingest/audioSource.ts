/** Where an import line's audio file is, checked before anything is copied or written. */
import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';

/** The absolute path of the audio file, or the reason it cannot be used. */
export async function resolveAudioPath(
  baseDir: string,
  given: string,
): Promise<{ path: string } | { problem: string }> {
  if (isAbsolute(given))
    return { problem: `audio.path ${JSON.stringify(given)} must be relative to the import file's folder` };
  const lexical = resolve(baseDir, given);
  if (escapes(baseDir, lexical)) {
    return { problem: `audio.path ${JSON.stringify(given)} escapes the import file's folder` };
  }
  let real: string;
  try {
    real = await realpath(lexical);
  } catch {
    return { problem: `audio.path ${JSON.stringify(given)} does not exist` };
  }
  // A symbolic link inside the folder may still point outside it.
  if (escapes(baseDir, real)) {
    return { problem: `audio.path ${JSON.stringify(given)} escapes the import file's folder` };
  }
  if (!(await stat(real)).isFile()) return { problem: `audio.path ${JSON.stringify(given)} is not a file` };
  return { path: real };
}

function escapes(baseDir: string, path: string): boolean {
  const rel = relative(baseDir, path);
  return rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel);
}

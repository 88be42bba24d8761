// Which Node.js releases `eds` runs on (package.json's engines). Plain JavaScript with no imports:
// it is checked before anything loads, since the SQLite binding ends an older Node.js process with
// a segmentation fault instead of an error.

/** The oldest supported release. */
export const OLDEST = [22, 12];

/** Why `version` (such as process.versions.node) cannot run `eds`, or undefined when it can. */
export function unsupportedRuntime(version) {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  if (major > OLDEST[0] || (major === OLDEST[0] && minor >= OLDEST[1])) return undefined;
  return (
    `eds needs Node.js 24 (or 22.12 and later); this is Node.js ${version}. ` +
    'Put Node.js 24 first on PATH, for example with `. scripts/use-node.sh` from the repository.'
  );
}

// Which Node.js releases `eds` runs on: exactly those package.json's `engines` names. Checked
// before anything else loads, since the SQLite binding ends an older Node.js process with a
// segmentation fault instead of an error, and a line past its end of life (23, 25) is not
// supported. Plain JavaScript, and only semver beside Node's own modules.
import { readFileSync } from 'node:fs';
import semver from 'semver';

const ENGINES = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).engines.node;

/** The newest line the range names (24 for `^22.12.0 || ^24.0.0`): the one to install. */
function newestLine(range) {
  const lows = new semver.Range(range).set.flatMap((comparators) =>
    comparators.filter((c) => c.operator.startsWith('>')).map((c) => c.semver.major),
  );
  return Math.max(...lows);
}

/**
 * Why `version` (such as process.versions.node) cannot run `eds`, or undefined when it can.
 * `range` is for tests; `eds` always checks package.json's.
 */
export function unsupportedRuntime(version, range = ENGINES) {
  if (semver.satisfies(version, range)) return undefined;
  const line = newestLine(range);
  return (
    `eds runs on the Node.js releases package.json's engines names (${range}); this is Node.js ${version}. ` +
    `Put Node.js ${line} first on PATH, for example with \`. scripts/use-node.sh\` from the repository.`
  );
}

/**
 * The package README walks a request and an import through the source tree file by file; a file
 * moved or renamed without the walk following would send a reader to nothing. Every path it names
 * under src/, test/ or scripts/ must exist.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';

const PACKAGE = new URL('../', import.meta.url);
const README = readFileSync(new URL('README.md', PACKAGE), 'utf8');

/** `src/http/app.ts`, `src/readModel/`, `test/support/stores.ts`: paths from the package's root. */
function namedPaths(text: string): string[] {
  const found = text.match(/(?<![\w./-])(?:src|test|scripts)\/[\w./-]*[\w/]/g) ?? [];
  return [...new Set(found)];
}

test('happy: the README names the files its walkthroughs pass through', () => {
  const paths = namedPaths(README);
  assert.ok(paths.length > 40, `only ${paths.length} paths found`);
  assert.ok(paths.includes('src/http/routes/getEncounter.ts'));
  assert.ok(paths.includes('src/ingest/writeImport.ts'));
});

test('validation: every src/, test/ and scripts/ path the README names exists', () => {
  const missing = namedPaths(README).filter((path) => !existsSync(new URL(path, PACKAGE)));
  assert.deepEqual(missing, []);
});

test('validation: a path to no file counts as missing', () => {
  const paths = namedPaths('see `src/nowhere/gone.ts` and `src/http/app.ts`.');
  assert.deepEqual(paths, ['src/nowhere/gone.ts', 'src/http/app.ts']);
  assert.equal(existsSync(new URL(paths[0]!, PACKAGE)), false);
});

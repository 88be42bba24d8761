/**
 * The product-text lint, run as `npm run lint` runs it, on a throwaway git repository: it must
 * name every tracked file and line that cites the history of the project's making, and pass
 * product text, untracked files and the lockfile.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'check-product-text.mjs');
const repos = [];
after(() => {
  for (const dir of repos) rmSync(dir, { recursive: true, force: true });
});

/** A git repository holding `files` (path → text), all tracked unless listed in `untracked`. */
function repository(files, untracked = []) {
  const dir = mkdtempSync(join(tmpdir(), 'product-text-'));
  repos.push(dir);
  execFileSync('git', ['init', '-q'], { cwd: dir });
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const tracked = Object.keys(files).filter((path) => !untracked.includes(path));
  if (tracked.length) execFileSync('git', ['add', '--', ...tracked], { cwd: dir });
  return dir;
}

function lint(cwd) {
  const run = spawnSync(process.execPath, [SCRIPT], { cwd, encoding: 'utf8' });
  return { status: run.status, output: run.stderr };
}

const CLEAN_DOC = [
  '# Operations',
  'Connect through a pooler in session mode.',
  'Stop the API processes of the earlier release before migration 009.',
  'A worker stops claiming, then waits 5 s.',
  '',
].join('\n');

test('fails and names each file and line that cites a work stage, an issue number or a session', () => {
  const dir = repository({
    'docs/benchmarks.md': `# Benchmarks\n\nMeasured again in stop 31 on a faster VM.\n`,
    'packages/server/src/config.ts': `const a = 1;\n// Rotation of the digest secret (issue 18).\nconst b = 2;\n`,
    'packages/server/test/list.test.ts': `test('the page total, fixed in #16', () => {});\n`,
    'README.md': `Not profiled in this session.\n`,
    'docs/operations.md': CLEAN_DOC,
  });
  const { status, output } = lint(dir);
  assert.equal(status, 1);
  assert.match(output, /^docs\/benchmarks\.md:3: a numbered work stage: "stop 31"$/m);
  assert.match(output, /^packages\/server\/src\/config\.ts:2: an issue or pull-request number: "issue 18"$/m);
  assert.match(output, /^packages\/server\/test\/list\.test\.ts:1: an issue or pull-request number: "#16"$/m);
  assert.match(output, /^README\.md:1: a work session: "session"$/m);
  assert.doesNotMatch(output, /operations\.md/);
  assert.match(output, /4 reference\(s\)/);
});

test('passes product text, and skips untracked files and the lockfile', () => {
  const dir = repository(
    {
      'docs/operations.md': CLEAN_DOC,
      'package-lock.json': '{ "note": "resolved in #16" }\n',
      'notes/draft.md': 'as in stop 12\n',
    },
    ['notes/draft.md'],
  );
  const { status, output } = lint(dir);
  assert.equal(output, '');
  assert.equal(status, 0);
});

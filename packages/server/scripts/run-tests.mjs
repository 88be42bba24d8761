#!/usr/bin/env node
// Runs a package's test files with Node's own test runner and tsx: `test/**/*.test.ts` in sorted
// order (the same list on every supported Node.js and shell), or the paths given.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { transpileSources } from './transpile-sources.mjs';

function findTests(dir) {
  const found = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found.push(...findTests(path));
    else if (name.endsWith('.test.ts')) found.push(path);
  }
  return found;
}

const args = process.argv.slice(2);
const files = args.length > 0 ? args.map((a) => resolve(a)) : findTests(resolve('test'));
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
const concurrency = process.env.TEST_CONCURRENCY ?? '3';
const reporter = process.env.TEST_REPORTER ?? (process.stdout.isTTY ? 'spec' : 'spec');
// A test that hangs fails with its name after this long (a whole run takes minutes), instead of
// holding CI until its own limit with nothing said. Tests wait for conditions, never for this.
const timeout = process.env.TEST_TIMEOUT_MS ?? '600000';
// The tests start `eds` as a subprocess again and again; through bin/eds.js each start has tsx
// load and compile the sources again, in the process and in its audit writer thread. They start
// one transpiled copy of the sources instead, made fresh for this run (test/support/cli.ts).
const packageRoot = resolve(import.meta.dirname, '..');
const transpiled = mkdtempSync(join(packageRoot, '.test-build-'));
let result;
try {
  transpileSources(packageRoot, transpiled);
  result = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '--test',
      `--test-concurrency=${concurrency}`,
      `--test-timeout=${timeout}`,
      `--test-reporter=${reporter}`,
      ...files,
    ],
    { stdio: 'inherit', env: { ...process.env, TEST_EDS_CLI: join(transpiled, 'cli', 'main.js') } },
  );
} finally {
  rmSync(transpiled, { recursive: true, force: true });
}
process.exit(result.status ?? 1);

/**
 * `eds` refuses a Node.js that package.json's engines does not name (an older one, whose SQLite
 * binding would end the process with a segmentation fault, or a line past its end of life) with a
 * message naming what to run, before anything loads.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
// @ts-expect-error: plain JavaScript without declarations, checked before anything loads
import { unsupportedRuntime } from '../../bin/supportedRuntime.js';

const check = unsupportedRuntime as (version: string, range?: string) => string | undefined;

const ENGINES: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
  .engines.node;

test('happy: Node.js 24, 22.12 and later 22 releases run', () => {
  for (const version of ['24.21.0', '24.0.0', '22.12.0', '22.23.3']) {
    assert.equal(check(version), undefined, version);
  }
});

test('error: Node.js 20, 22 before 22.12 and the lines past their end of life are refused with what to run instead', () => {
  for (const version of ['20.20.2', '22.11.0', '18.20.8', '23.11.1', '25.9.0']) {
    const refusal = check(version);
    assert.ok(refusal, version);
    assert.match(refusal, new RegExp(`this is Node\\.js ${version.replaceAll('.', '\\.')}`));
    assert.match(refusal, /Put Node\.js 24 first on PATH/);
  }
});

test("happy: the check follows package.json's engines, which it names in the refusal", () => {
  assert.ok(check('23.0.0')?.includes(`(${ENGINES})`));
  // A later engines range moves both what runs and what the refusal says to install.
  assert.equal(check('26.1.0', '^24.0.0 || ^26.0.0'), undefined);
  assert.match(check('22.23.3', '^24.0.0 || ^26.0.0') ?? '', /Put Node\.js 26 first on PATH/);
});

const OLD_NODE = '/usr/bin/node';
const oldNodeVersion = existsSync(OLD_NODE)
  ? spawnSync(OLD_NODE, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim()
  : '';

test('error: `eds` run by an older Node.js exits 1 with the refusal, not a crash', {
  skip: check(oldNodeVersion || '99.0.0') === undefined && 'no older Node.js on this machine',
}, () => {
  const bin = new URL('../../bin/eds.js', import.meta.url).pathname;
  const run = spawnSync(OLD_NODE, [bin, 'demo', '--help'], { encoding: 'utf8' });
  assert.equal(run.status, 1, run.stderr);
  assert.match(run.stderr, /this is Node\.js .*Put Node\.js 24 first on PATH/s);
});

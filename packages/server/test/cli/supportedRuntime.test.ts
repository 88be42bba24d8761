/**
 * `eds` refuses a Node.js older than it supports with a message naming what it needs, before the
 * SQLite binding can end the process with a segmentation fault.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
// @ts-expect-error: plain JavaScript without declarations, checked before anything loads
import { unsupportedRuntime } from '../../bin/supportedRuntime.js';

const check = unsupportedRuntime as (version: string) => string | undefined;

test('happy: Node.js 24, 22.12 and later 22 releases run', () => {
  for (const version of ['24.21.0', '24.0.0', '22.12.0', '22.23.3', '25.1.0']) {
    assert.equal(check(version), undefined, version);
  }
});

test('error: Node.js 20 and 22 before 22.12 are refused with what to run instead', () => {
  for (const version of ['20.20.2', '22.11.0', '18.20.8']) {
    const refusal = check(version);
    assert.ok(refusal, version);
    assert.match(refusal, new RegExp(`this is Node\\.js ${version.replaceAll('.', '\\.')}`));
    assert.match(refusal, /Node\.js 24/);
  }
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
  assert.match(run.stderr, /eds needs Node\.js 24/);
});

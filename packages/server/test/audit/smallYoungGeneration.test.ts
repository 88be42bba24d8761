/**
 * A thread started small has a smaller young generation than its process's threads, and threads
 * started after it get the process's own again. V8 counts the young generation in an isolate's
 * heap size limit, which is how the sizes are read here.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { withSmallYoungGeneration } from '../../src/audit/smallYoungGeneration.js';
import { heapLimitOf, plainThread } from '../support/threadHeap.js';

test('a thread started small gets a smaller young generation; later threads the usual one', async () => {
  const before = await heapLimitOf(plainThread());
  const small = await heapLimitOf(withSmallYoungGeneration(plainThread));
  const after = await heapLimitOf(plainThread());
  assert.ok(small < before, `small thread's heap limit ${small} is not below ${before}`);
  assert.equal(after, before);
});

test('threads started small together all get the small young generation', async () => {
  const before = await heapLimitOf(plainThread());
  const first = withSmallYoungGeneration(plainThread);
  const second = withSmallYoungGeneration(plainThread);
  const [a, b] = await Promise.all([heapLimitOf(first), heapLimitOf(second)]);
  assert.ok(a < before && b < before, `${a}, ${b} against ${before}`);
  assert.equal(await heapLimitOf(plainThread()), before);
});

test('a thread that cannot start leaves the process flag as it was', async () => {
  const before = await heapLimitOf(plainThread());
  assert.throws(() =>
    withSmallYoungGeneration(() => {
      throw new Error('no thread');
    }),
  );
  assert.equal(await heapLimitOf(plainThread()), before);
});

test('the flag put back is the one on the process command line, as the image gives it', () => {
  const fixture = new URL('./fixtures/heapLimits.ts', import.meta.url).pathname;
  for (const flag of ['--max-semi-space-size=4', '--max_semi_space_size=4']) {
    const run = spawnSync(process.execPath, [flag, '--import', 'tsx', fixture], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    const { before, small, after } = JSON.parse(run.stdout) as {
      before: number;
      small: number;
      after: number;
    };
    assert.ok(small < before, `${flag}: ${small} against ${before}`);
    assert.equal(after, before, flag);
  }
});

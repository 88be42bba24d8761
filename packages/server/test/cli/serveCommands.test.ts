/**
 * `serveUntilSignal`, in-process: what a start that fails leaves behind in the process.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { serveUntilSignal } from '../../src/cli/serveCommands.js';
import { createCommandServices } from '../support/cli.js';

test('error: a start that cannot listen gives SIGTERM and SIGINT back, so a later signal still stops the process', async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const { port } = taken.address() as { port: number };
  const { services, close } = await createCommandServices('sqlite', {
    EDS_HOST: '127.0.0.1',
    EDS_PORT: String(port),
  });
  const before = { term: process.listenerCount('SIGTERM'), int: process.listenerCount('SIGINT') };
  try {
    await assert.rejects(
      serveUntilSignal(services, { api: true, worker: false }),
      /cannot listen: .*EADDRINUSE/,
    );
    assert.deepEqual(
      { term: process.listenerCount('SIGTERM'), int: process.listenerCount('SIGINT') },
      before,
      'no listener of the failed start is left on the signals',
    );
  } finally {
    await close();
    await new Promise((resolve) => taken.close(resolve));
  }
});

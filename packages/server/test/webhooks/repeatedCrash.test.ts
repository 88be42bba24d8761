/**
 * At least once under repeated crashes: events keep being finalized while real `eds worker`
 * processes are killed with SIGKILL one after another, mid-stream. Once a worker is left
 * running, every event has reached the receiver (verified) at least once; none is lost.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import { EDS_BIN } from '../support/cli.js';
import { forEachStore } from '../support/stores.js';
import { waitFor } from '../support/waitFor.js';
import { createHarness, type Harness, webhookEnv } from './support/harness.js';
import { startReceiver } from './support/receiver.js';

const LEASE_MS = 1000;

forEachStore('webhook worker killed repeatedly', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind, { EDS_WEBHOOK_LEASE_MS: String(LEASE_MS) });
  });
  after(() => h.close());

  test('every event of a stream is delivered although workers keep being SIGKILLed', async () => {
    const secret = { value: '' };
    const receiver = await startReceiver(() => secret.value);
    const children: ChildProcess[] = [];
    const startWorker = () => {
      const child = spawn(process.execPath, [EDS_BIN, 'worker'], {
        cwd: h.database.dir,
        env: {
          PATH: process.env.PATH ?? '',
          ...webhookEnv(h.database, { EDS_WEBHOOK_LEASE_MS: String(LEASE_MS) }),
        },
        stdio: 'ignore',
      });
      children.push(child);
      return child;
    };
    try {
      // Slow answers keep attempts in flight, so kills land mid-delivery.
      receiver.setResponder(() => ({ status: 204, delayMs: 150 }));
      const sub = await h.subscribe(receiver.url);
      secret.value = sub.secret;
      const events: string[] = [];
      for (let round = 0; round < 4; round++) {
        const worker = startWorker();
        for (let burst = 0; burst < 3; burst++) {
          const seen = receiver.received.length;
          events.push(...(await h.finalize(4)));
          // The worker is sending (answers take 150 ms): the next burst or the kill lands mid-delivery.
          await waitFor(() => receiver.received.length > seen, 'the worker to be sending');
        }
        worker.kill('SIGKILL');
        await once(worker, 'exit');
      }
      startWorker();
      for (const e of events) await h.waitForStatus(e, 'succeeded', 30_000);
      const delivered = new Set(
        receiver.received.filter((r) => r.verification.ok).map((r) => r.headers['eds-event-id'] as string),
      );
      const lost = events.filter((e) => !delivered.has(e));
      assert.deepEqual(lost, [], 'every event reached the receiver');
      assert.equal(events.length, 48);
    } finally {
      for (const child of children)
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await receiver.close();
    }
  });
});

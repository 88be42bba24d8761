/**
 * A crashed worker's claims are taken over within seconds: two real `eds worker` processes share
 * a backlog of one import's events, one is killed with SIGKILL mid-stream, and the survivor
 * delivers every event within 15 s of the kill (short leases, renewed while attempts are in
 * flight). No delivery is ever attempted twice at the same time.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import { startDeliveryWorker } from '../../src/webhooks/worker.js';
import { EDS_BIN } from '../support/cli.js';
import { forEachStore } from '../support/stores.js';
import { waitFor } from '../support/waitFor.js';
import { attemptsOf, createHarness, type Harness, webhookEnv } from './support/harness.js';
import { startReceiver } from './support/receiver.js';

const EVENTS = 500;
const KILL_AFTER = 150;
const TAKEOVER_DEADLINE_MS = 15_000;
/** Short enough to be taken over within the deadline; the heartbeat renews it every third. */
const LEASE_MS = 3000;

forEachStore('webhook worker takeover', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind);
  });
  after(() => h.close());

  test('a SIGKILLed worker’s claims are taken over: every event arrives within 15 s of the kill', async () => {
    const secret = { value: '' };
    const receiver = await startReceiver(() => secret.value);
    receiver.setResponder(() => ({ status: 204, delayMs: 50 }));
    const env = {
      PATH: process.env.PATH ?? '',
      ...webhookEnv(h.database, { EDS_WEBHOOK_LEASE_MS: String(LEASE_MS), EDS_WEBHOOK_TIMEOUT_MS: '10000' }),
    };
    const workers: ChildProcess[] = [];
    try {
      const sub = await h.subscribe(receiver.url);
      secret.value = sub.secret;
      const events = await h.finalize(EVENTS);
      for (let i = 0; i < 2; i++) {
        workers.push(
          spawn(process.execPath, [EDS_BIN, 'worker'], { cwd: h.database.dir, env, stdio: 'ignore' }),
        );
      }
      await receiver.waitFor(KILL_AFTER, 180_000);
      const [doomed] = workers;
      doomed!.kill('SIGKILL');
      const killedAt = Date.now();
      await once(doomed!, 'exit');

      const delivered = () =>
        new Set(receiver.received.filter((r) => r.verification.ok).map((r) => r.headers['eds-event-id']));
      await waitFor(
        () => delivered().size === EVENTS,
        'every event delivered',
        Math.max(0, TAKEOVER_DEADLINE_MS - (Date.now() - killedAt)),
      );
      assert.ok(Date.now() - killedAt <= TAKEOVER_DEADLINE_MS + 100);
      assert.deepEqual([...delivered()].sort(), [...events].sort());
      assert.equal(
        receiver.received.filter((r) => r.concurrentSameDelivery > 0).length,
        0,
        'no delivery had two attempts in flight at once',
      );
    } finally {
      for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
      await receiver.close();
    }
  });

  test('an attempt that outlasts its lease keeps its claim: renewed, never sent by a second worker', async () => {
    const secret = { value: '' };
    const receiver = await startReceiver(() => secret.value);
    // Three lease lengths for one answer: only the heartbeat keeps the claim alive.
    receiver.setResponder(() => ({ status: 204, delayMs: 6000 }));
    const settings = { EDS_WEBHOOK_LEASE_MS: '2000', EDS_WEBHOOK_TIMEOUT_MS: '15000' };
    const workers = [startDeliveryWorker(h.withEnv(settings)), startDeliveryWorker(h.withEnv(settings))];
    try {
      const org = await h.fixtures.organization();
      const sub = await h.subscribe(receiver.url, { org });
      secret.value = sub.secret;
      const [eventId] = await h.finalize(1, org);
      const delivery = await h.waitForStatus(eventId!, 'succeeded', 30_000);
      assert.equal(receiver.received.length, 1, 'sent once');
      assert.deepEqual(
        (await attemptsOf(h.services, delivery.id)).map((a) => a.outcome),
        ['succeeded'],
      );
    } finally {
      for (const w of workers) await w.stop();
      await receiver.close();
    }
  });
});

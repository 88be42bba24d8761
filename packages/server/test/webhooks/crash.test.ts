/**
 * At least once across a crash: a real `eds worker` process is killed with SIGKILL while its
 * attempts are in flight; after the leases expire another worker claims the deliveries again and
 * every event arrives, under its original Delivery-Id.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import { startDeliveryWorker } from '../../src/webhooks/worker.js';
import { EDS_BIN } from '../support/cli.js';
import { forEachStore } from '../support/stores.js';
import { attemptsOf, createHarness, type Harness, webhookEnv } from './support/harness.js';
import { startReceiver } from './support/receiver.js';

const LEASE_MS = 1500;

forEachStore('webhook worker crash', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind, { EDS_WEBHOOK_LEASE_MS: String(LEASE_MS), EDS_WEBHOOK_TIMEOUT_MS: '5000' });
  });
  after(async () => {
    await h.close();
  });

  test('a worker killed with SIGKILL mid-delivery: redelivered after the lease expires, nothing lost', async () => {
    const secret = { value: '' };
    const receiver = await startReceiver(() => secret.value);
    let child: ChildProcess | undefined;
    let rescuer: { stop(): Promise<void> } | undefined;
    try {
      let phase: 'doomed' | 'rescue' = 'doomed';
      // While the doomed worker sends, nothing is answered: every attempt is in flight at the kill.
      receiver.setResponder(() => (phase === 'doomed' ? { status: 204, hang: true } : { status: 204 }));
      const sub = await h.subscribe(receiver.url);
      secret.value = sub.secret;

      child = spawn(process.execPath, [EDS_BIN, 'worker'], {
        cwd: h.database.dir,
        env: {
          PATH: process.env.PATH ?? '',
          ...webhookEnv(h.database, {
            EDS_WEBHOOK_LEASE_MS: String(LEASE_MS),
            EDS_WEBHOOK_TIMEOUT_MS: '5000',
          }),
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr?.on('data', (c: Buffer) => {
        stderr += c.toString();
      });
      const events = await h.finalize(6);
      await receiver.waitFor(1, 15_000).catch((error) => {
        throw new Error(`${error.message}; worker stderr: ${stderr}`);
      });
      const claimed = (await h.deliveries()).filter((d) => events.includes(d.event_id));
      assert.ok(claimed.some((d) => d.status === 'sending'));
      const killedAt = Date.now();
      child.kill('SIGKILL');
      await once(child, 'exit');
      const inFlight = receiver.received.length;
      assert.ok(inFlight >= 1);

      phase = 'rescue';
      rescuer = startDeliveryWorker(h.services);
      for (const e of events) await h.waitForStatus(e, 'succeeded', 10_000);

      const rescued = receiver.received.slice(inFlight);
      for (const r of rescued) assert.equal(r.verification.ok, true);
      // Every event arrived after the crash, each under its own original delivery id.
      const rows = (await h.deliveries()).filter((d) => events.includes(d.event_id));
      assert.equal(rows.length, events.length);
      for (const row of rows) {
        assert.ok(rescued.some((r) => r.deliveryId === row.id && r.headers['eds-event-id'] === row.event_id));
      }
      // Those the dead worker had in flight waited for their lease to run out.
      const crashedIds = new Set(receiver.received.slice(0, inFlight).map((r) => r.deliveryId));
      const leaseEnd = new Map(claimed.map((d) => [d.id, d.lease_expires_at]));
      for (const r of rescued) {
        if (!crashedIds.has(r.deliveryId)) continue;
        const end = leaseEnd.get(r.deliveryId!);
        assert.ok(end && r.at >= end, 'not claimed again before its lease expired');
        assert.ok(r.at > killedAt);
      }
      // The crashed attempt left no record; the retry is numbered after it.
      const crashed = rows.find((r) => crashedIds.has(r.id))!;
      const attempts = await attemptsOf(h.services, crashed.id);
      assert.deepEqual(
        attempts.map((a) => [a.attempt_number, a.outcome]),
        [[2, 'succeeded']],
      );
    } finally {
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await rescuer?.stop();
      await receiver.close();
    }
  });
});

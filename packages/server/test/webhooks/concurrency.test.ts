/**
 * Many workers share the work on PostgreSQL: two workers with their own connection pools claim
 * with FOR UPDATE SKIP LOCKED, and no delivery is ever sent by both at once.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Services } from '../../src/services.js';
import { recordTranscriptsReady } from '../../src/webhooks/events.js';
import { startDeliveryWorker } from '../../src/webhooks/worker.js';
import { storeKinds } from '../support/stores.js';
import { createHarness, type Harness } from './support/harness.js';
import { startReceiver } from './support/receiver.js';

const skip = storeKinds().includes('postgres')
  ? false
  : 'TEST_DATABASE_URL is not set: PostgreSQL run skipped';

async function attemptsCounted(services: Services): Promise<number> {
  const metric = await services.metrics.webhookAttempts.get();
  return metric.values.reduce((sum, v) => sum + v.value, 0);
}

test('two workers never send one delivery at once [postgres]', { skip }, async () => {
  let h: Harness | undefined;
  let secret = '';
  const receiver = await startReceiver(() => secret);
  const workers: { stop(): Promise<void> }[] = [];
  try {
    // A generous timeout and lease: on a loaded test machine a short deadline can pass before a
    // request leaves (a retry) or a lease can run out (a second claim, fenced): both correct at
    // least once, but not what this test is about, which is claims under SKIP LOCKED.
    h = await createHarness('postgres', {
      EDS_WEBHOOK_RETRY_SCHEDULE: '0.02,0.02,0.02',
      EDS_WEBHOOK_TIMEOUT_MS: '5000',
      EDS_WEBHOOK_LEASE_MS: '15000',
    });
    const sub = await h.subscribe(receiver.url);
    secret = sub.secret;
    // Slow-ish answers and a first failure for some: attempts overlap and retries interleave.
    const failedOnce = new Set<string>();
    receiver.setResponder((r) => {
      const id = r.deliveryId ?? '';
      if (id.charCodeAt(id.length - 1) % 3 === 0 && !failedOnce.has(id)) {
        failedOnce.add(id);
        return { status: 503, delayMs: 5 };
      }
      return { status: 204, delayMs: Math.floor(Math.random() * 15) };
    });
    const a = h.withEnv({ EDS_WEBHOOK_ENDPOINT_CONCURRENCY: '16' });
    const b = h.withEnv({ EDS_WEBHOOK_ENDPOINT_CONCURRENCY: '16' });
    workers.push(startDeliveryWorker(a), startDeliveryWorker(b));

    const events: string[] = [];
    // Events only (the worker never reads the clinical rows), written as the importer would.
    const harness = h;
    for (let i = 0; i < 10; i++) {
      const ready = Array.from({ length: 30 }, (_, j) => ({
        organizationId: harness.org,
        encounterId: `enc_c${i}_${j}`,
        documentId: `doc_c${i}_${j}`,
      }));
      events.push(
        ...(await harness.services.store.db
          .transaction()
          .execute((tx) => recordTranscriptsReady(tx, ready, Date.now(), { config: harness.config }))),
      );
    }
    const until = Date.now() + 20_000;
    for (;;) {
      const open = await h.services.store.db
        .selectFrom('webhook_deliveries')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('status', '!=', 'succeeded')
        .executeTakeFirstOrThrow();
      if (Number(open.n) === 0) break;
      assert.ok(Date.now() < until, `${open.n} deliveries still open`);
      await new Promise((r) => setTimeout(r, 50));
    }

    const byDelivery = new Map<string, number>();
    for (const r of receiver.received) {
      assert.equal(r.verification.ok, true);
      assert.equal(r.concurrentSameDelivery, 0, `delivery ${r.deliveryId} was sent twice at once`);
      byDelivery.set(r.deliveryId!, (byDelivery.get(r.deliveryId!) ?? 0) + 1);
    }
    const rows = await h.deliveries();
    assert.equal(rows.length, events.length);
    const attempts = await harness.services.store.db
      .selectFrom('webhook_attempts')
      .select(['delivery_id', 'status_code', 'error_class', 'outcome'])
      .execute();
    for (const row of rows) {
      // Every answered attempt the store recorded was seen by the receiver, and nothing more
      // than the recorded attempts arrived.
      const mine = attempts.filter((a) => a.delivery_id === row.id);
      const seen = byDelivery.get(row.id) ?? 0;
      const answered = mine.filter((a) => a.status_code !== null).length;
      assert.ok(seen >= answered && seen <= mine.length, `${row.id}: ${seen} seen, ${JSON.stringify(mine)}`);
      assert.equal(row.attempt_count, mine.length);
      assert.equal(mine.filter((a) => a.outcome === 'succeeded').length, 1);
      assert.ok(
        mine.every((a) => a.outcome !== 'superseded'),
        'no lease was lost',
      );
    }
    // Both workers took part.
    assert.ok((await attemptsCounted(a)) > 0, 'worker A sent');
    assert.ok((await attemptsCounted(b)) > 0, 'worker B sent');
  } finally {
    for (const w of workers) await w.stop();
    await receiver.close();
    await h?.close();
  }
});

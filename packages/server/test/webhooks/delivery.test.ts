import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import type { Services } from '../../src/services.js';
import { listDeliveryViews, recoverDeliveries, redeliverEvent } from '../../src/webhooks/deliveryOps.js';
import { activateSubscription, changeEndpoint, revokeReadiness } from '../../src/webhooks/subscriptions.js';
import { startDeliveryWorker } from '../../src/webhooks/worker.js';
import { histogramCountAndSum } from '../support/metrics.js';
import { forEachStore } from '../support/stores.js';
import { waitFor } from '../support/waitFor.js';
import { attemptsOf, createHarness, type Harness } from './support/harness.js';
import { startReceiver } from './support/receiver.js';
import { CONTRACT_BODY_KEYS } from './support/verifier.js';

const PREFIXED = ['eds-delivery-id', 'eds-event-id', 'eds-signature', 'eds-timestamp', 'eds-webhook-version'];

async function counter(services: Services, outcome: string): Promise<number> {
  const metric = await services.metrics.webhookAttempts.get();
  return metric.values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
}

/** A port with nothing listening on it (bound, then closed). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

forEachStore('webhook delivery worker', (kind) => {
  let h: Harness;
  const cleanups: (() => Promise<void>)[] = [];
  before(async () => {
    h = await createHarness(kind);
  });
  after(async () => {
    await h.close();
  });
  const run = async (body: () => Promise<void>) => {
    try {
      await body();
    } finally {
      for (const c of cleanups.splice(0).reverse()) await c();
    }
  };
  const receiverFor = async (secret: { value: string }) => {
    const r = await startReceiver(() => secret.value);
    cleanups.push(() => r.close());
    return r;
  };
  const worker = (services: Services = h.services) => {
    const w = startDeliveryWorker(services);
    cleanups.push(() => w.stop());
    return w;
  };
  /** A fresh organization with an eligible subscription to a new receiver (and a worker, unless null). */
  const setup = async (services: Services | null = h.services) => {
    const org = await h.fixtures.organization();
    const secret = { value: '' };
    const receiver = await receiverFor(secret);
    const sub = await h.subscribe(receiver.url, { org });
    secret.value = sub.secret;
    if (services !== null) worker(services);
    return { org, receiver, sub, secret };
  };

  test('delivers the stored body with exactly the five signed headers', () =>
    run(async () => {
      const before = await counter(h.services, 'succeeded');
      const { org, receiver, sub } = await setup();
      const [eventId] = await h.finalize(1, org);
      const [got] = await receiver.waitFor(1);
      assert.ok(got);
      assert.equal(got.verification.ok, true, JSON.stringify(got.verification));
      assert.equal(got.method, 'POST');
      assert.equal(got.path, '/hooks/eds');
      assert.equal(got.headers['content-type'], 'application/json');
      assert.deepEqual(
        Object.keys(got.headers)
          .filter((k) => k.startsWith('eds-'))
          .sort(),
        PREFIXED,
      );
      const event = await h.services.store.db
        .selectFrom('webhook_events')
        .selectAll()
        .where('id', '=', eventId!)
        .executeTakeFirstOrThrow();
      assert.equal(got.rawBody.toString('utf8'), event.body, 'the stored bytes, not a re-serialization');
      const body = JSON.parse(event.body);
      assert.deepEqual(Object.keys(body), CONTRACT_BODY_KEYS);
      assert.equal(got.headers['eds-event-id'], eventId);
      assert.equal(got.headers['eds-webhook-version'], '2026-05-01');
      assert.ok(Math.abs(Number(got.headers['eds-timestamp']) - Date.now() / 1000) < 5);
      const delivery = await h.waitForStatus(eventId!, 'succeeded');
      assert.equal(got.headers['eds-delivery-id'], delivery.id);
      assert.equal(delivery.subscription_id, sub.id);
      const attempts = await attemptsOf(h.services, delivery.id);
      assert.equal(attempts.length, 1);
      assert.equal(attempts[0]?.status_code, 204);
      assert.equal(attempts[0]?.outcome, 'succeeded');
      assert.equal(attempts[0]?.error_class, null);
      assert.equal((await counter(h.services, 'succeeded')) - before, 1);
      const latency = await histogramCountAndSum(h.services.metrics.webhookDeliveryLatency);
      assert.ok((latency.count ?? 0) >= 1);
    }));

  test('nothing is sent unless every gate holds, re-checked at send time', () =>
    run(async () => {
      const org = await h.fixtures.organization();
      const secret = { value: '' };
      const receiver = await receiverFor(secret);
      // Gate by gate: not activated, correlation not confirmed, changed after activation.
      await h.subscribe(receiver.url, { org, activate: false });
      await h.subscribe(receiver.url, { org, correlation: 'not_confirmed_runtime_blocked' });
      const changed = await h.subscribe(receiver.url, { org });
      await changeEndpoint(h.services, changed.id, `${receiver.url}?v=2`);
      let w = startDeliveryWorker(h.services);
      const [first] = await h.finalize(1, org);
      // No delivery is written for a closed gate, so there is nothing the worker could send.
      assert.deepEqual(await h.deliveries(first), []);
      await w.stop();
      assert.equal(receiver.received.length, 0);

      // Eligible when the event is written, but changed before the worker sends: left pending.
      const late = await h.subscribe(receiver.url, { org });
      secret.value = late.secret;
      const [second] = await h.finalize(1, org);
      assert.equal((await h.deliveries(second)).length, 1);
      await changeEndpoint(h.services, late.id, `${receiver.url}?v=3`);
      // Another organization's delivery, due after this one: once the worker has sent it, its
      // claims have passed over this one.
      const control = await setup(null);
      const [controlEvent] = await h.finalize(1, control.org);
      w = startDeliveryWorker(h.services);
      await h.waitForStatus(controlEvent!, 'succeeded');
      await w.stop();
      assert.equal(receiver.received.length, 0);
      const [givenBack] = await h.deliveries(second);
      assert.equal(givenBack?.status, 'pending');

      // Re-activated, but the deployment switch is off in the worker's process: still nothing,
      // and the delivery is not even claimed.
      await activateSubscription(h.services, late.id, { routes: ['transcript'], by: 'A', reference: 'R' });
      w = startDeliveryWorker(h.withEnv({ EDS_WEBHOOKS_ENABLED: 'false' }));
      await w.stop();
      assert.equal(receiver.received.length, 0);
      assert.deepEqual(await h.deliveries(second), [givenBack]);

      // Every gate holds again: the pending delivery goes out, to the new revision's URL.
      worker();
      const [got] = await receiver.waitFor(1);
      assert.equal(got?.verification.ok, true);
      assert.equal(got?.path, '/hooks/eds?v=3');
      await h.waitForStatus(second!, 'succeeded');
    }));

  test('retries 500 with the same delivery id and body bytes', () =>
    run(async () => {
      const { org, receiver } = await setup();
      receiver.setResponder((_r, i) => ({ status: i < 2 ? 500 : 204 }));
      const [eventId] = await h.finalize(1, org);
      const got = await receiver.waitFor(3);
      const delivery = await h.waitForStatus(eventId!, 'succeeded');
      assert.ok(got.every((r) => r.verification.ok));
      assert.deepEqual(new Set(got.map((r) => r.deliveryId)), new Set([delivery.id]));
      assert.equal(new Set(got.map((r) => r.rawBody.toString('hex'))).size, 1);
      const attempts = await attemptsOf(h.services, delivery.id);
      assert.deepEqual(
        attempts.map((a) => [a.attempt_number, a.status_code, a.outcome]),
        [
          [1, 500, 'retry'],
          [2, 500, 'retry'],
          [3, 204, 'succeeded'],
        ],
      );
      assert.ok(attempts[1]!.started_at - attempts[0]!.started_at >= 45, 'waited the first step');
    }));

  test('exhausting the round fails the delivery', () =>
    run(async () => {
      const { org, receiver } = await setup();
      receiver.setResponder(() => ({ status: 503 }));
      const [eventId] = await h.finalize(1, org);
      const delivery = await h.waitForStatus(eventId!, 'failed');
      assert.equal(receiver.received.length, 4, 'schedule of 3 delays: 4 attempts');
      assert.equal(delivery.last_status_code, 503);
    }));

  test('no retry on 400, 401, 403, 404, 301, 302 or 307 (redirects are not followed)', () =>
    run(async () => {
      // The worker starts once each event's answer is known, so no first attempt meets a default.
      const { org, receiver } = await setup(null);
      const statuses = [400, 401, 403, 404, 301, 302, 307];
      const byEvent = new Map<string, number>();
      receiver.setResponder((r) => {
        const status = byEvent.get(String(r.headers['eds-event-id'])) ?? 500;
        const headers: Record<string, string> =
          status >= 300 && status < 400 ? { location: '/elsewhere' } : {};
        return { status, headers };
      });
      const events = await h.finalize(statuses.length, org);
      for (const [i, e] of events.entries()) byEvent.set(e, statuses[i]!);
      worker();
      // Failed is final: every attempt was received before its delivery was marked so.
      for (const e of events) await h.waitForStatus(e, 'failed');
      assert.equal(receiver.received.length, statuses.length);
      assert.ok(receiver.received.every((r) => r.path === '/hooks/eds'));
      for (const [i, e] of events.entries()) {
        const [row] = await h.deliveries(e);
        const attempts = await attemptsOf(h.services, row!.id);
        assert.deepEqual(
          attempts.map((a) => [a.status_code, a.outcome]),
          [[statuses[i], 'failed']],
        );
      }
    }));

  test('429 with Retry-After is honored (fresh timestamp and signature), up to the next step', () =>
    run(async () => {
      const slow = h.withEnv({ EDS_WEBHOOK_RETRY_SCHEDULE: '0.05,2,2' });
      const { org, receiver } = await setup(slow);
      receiver.setResponder((_r, i) =>
        i === 0 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 204 },
      );
      const [eventId] = await h.finalize(1, org, slow);
      const got = await receiver.waitFor(2, 5000);
      await h.waitForStatus(eventId!, 'succeeded');
      const [a, b] = got as [(typeof got)[0], (typeof got)[0]];
      assert.ok(b.at - a.at >= 950, `waited ${b.at - a.at} ms`);
      assert.ok(b.at - a.at < 2000);
      assert.equal(a.deliveryId, b.deliveryId);
      assert.ok(Number(b.headers['eds-timestamp']) > Number(a.headers['eds-timestamp']));
      assert.notEqual(a.headers['eds-signature'], b.headers['eds-signature']);
      assert.ok(a.rawBody.equals(b.rawBody));
      assert.ok(a.verification.ok && b.verification.ok);
    }));

  test('a timeout and a refused connection are retried with the same delivery id', () =>
    run(async () => {
      const quick = h.withEnv({ EDS_WEBHOOK_TIMEOUT_MS: '400' });
      const { org, receiver } = await setup(quick);
      receiver.setResponder((_r, i) => (i === 0 ? { status: 204, hang: true } : { status: 204 }));
      const [timedOut] = await h.finalize(1, org, quick);
      const delivery = await h.waitForStatus(timedOut!, 'succeeded');
      const attempts = await attemptsOf(h.services, delivery.id);
      assert.deepEqual(
        attempts.map((a) => [a.error_class, a.outcome]),
        [
          ['timeout', 'retry'],
          [null, 'succeeded'],
        ],
      );
      assert.ok(attempts[0]!.duration_ms >= 350);
      assert.deepEqual(new Set(receiver.received.map((r) => r.deliveryId)), new Set([delivery.id]));

      // Refused: nothing listens on the port until the second attempt has failed.
      const roomy = h.withEnv({ EDS_WEBHOOK_RETRY_SCHEDULE: '0.05,0.05,0.6,0.6' });
      const org2 = await h.fixtures.organization();
      const port = await freePort();
      const sub = await h.subscribe(`http://127.0.0.1:${port}/late`, { org: org2 });
      worker(roomy);
      const [refused] = await h.finalize(1, org2, roomy);
      const [row] = await h.deliveries(refused);
      await waitFor(async () => (await attemptsOf(h.services, row!.id)).length >= 2, 'two refused attempts');
      // The receiver comes back on the same port, as after an outage.
      const back = await startReceiver(() => sub.secret, { path: '/late', port });
      cleanups.push(() => back.close());
      await h.waitForStatus(refused!, 'succeeded', 5000);
      const tries = await attemptsOf(h.services, row!.id);
      assert.deepEqual(
        tries.slice(0, 2).map((a) => a.error_class),
        ['connection_refused', 'connection_refused'],
      );
      assert.equal(tries.at(-1)?.outcome, 'succeeded');
      assert.equal(back.received[0]?.deliveryId, row!.id);
    }));

  test('receivers on loopback are refused without EDS_WEBHOOK_ALLOW_PRIVATE_NETWORKS, also by name', () =>
    run(async () => {
      const strict = h.withEnv({ EDS_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' });
      const org = await h.fixtures.organization();
      const secret = { value: '' };
      const receiver = await receiverFor(secret);
      const byIp = await h.subscribe(receiver.url, { org });
      const byName = await h.subscribe(receiver.url.replace('127.0.0.1', 'localhost'), { org });
      worker(strict);
      const [eventId] = await h.finalize(1, org, strict);
      await h.waitForStatus(eventId!, 'failed');
      const deliveries = await h.deliveries(eventId);
      assert.deepEqual(deliveries.map((d) => d.subscription_id).sort(), [byIp.id, byName.id].sort());
      for (const d of deliveries) {
        const attempts = await attemptsOf(h.services, d.id);
        assert.deepEqual(
          attempts.map((a) => [a.error_class, a.outcome, a.status_code]),
          [['egress_refused', 'failed', null]],
        );
      }
      assert.equal(receiver.received.length, 0, 'no request reached the loopback receiver');
    }));

  test('revoke-readiness cancels pending, in-flight and stale deliveries; a late result does not revive them', () =>
    run(async () => {
      const single = h.withEnv({
        EDS_WEBHOOK_CONCURRENCY: '1',
        EDS_WEBHOOK_ENDPOINT_CONCURRENCY: '1',
        EDS_WEBHOOK_TIMEOUT_MS: '5000',
      });
      const before = await counter(single, 'cancelled');
      const { org, receiver, sub } = await setup(single);
      receiver.setResponder(() => ({ status: 204, delayMs: 300 }));
      const events = await h.finalize(3, org, single);
      await receiver.waitFor(1);
      const rows = await h.deliveries();
      const mine = rows.filter((r) => events.includes(r.event_id));
      const inFlight = mine.find((r) => r.status === 'sending');
      const waiting = mine.filter((r) => r.status === 'pending');
      assert.ok(inFlight);
      assert.equal(
        waiting.length,
        2,
        JSON.stringify(mine.map((r) => [r.status, r.attempt_count, r.lease_token])),
      );
      // One looks like a crashed worker's: sending, lease expired.
      const now = Date.now();
      await h.services.store.db
        .updateTable('webhook_deliveries')
        .set({ status: 'sending', lease_token: 'crashed', lease_expires_at: now - 1000, due_at: now - 1000 })
        .where('id', '=', waiting[0]!.id)
        .execute();

      const out = await revokeReadiness(h.services, sub.id);
      assert.equal(out.subscription_id, sub.id);
      assert.equal(out.cancelled, 3);
      await waitFor(
        async () => (await attemptsOf(h.services, inFlight.id)).length === 1,
        'the attempt on the wire to be recorded',
      );
      const after = (await h.deliveries()).filter((r) => events.includes(r.event_id));
      assert.deepEqual(
        after.map((r) => r.status),
        ['cancelled', 'cancelled', 'cancelled'],
      );
      assert.equal(receiver.received.length, 1, 'nothing more was sent');
      // The attempt on the wire is recorded as cancelled: either its answer came first, or the
      // worker's next lease renewal found the delivery cancelled and cut the request short.
      const attempts = await attemptsOf(h.services, inFlight.id);
      assert.equal(attempts.length, 1);
      assert.equal(attempts[0]?.outcome, 'cancelled');
      assert.ok(
        attempts[0]?.status_code === 204 || attempts[0]?.error_class === 'lease_lost',
        JSON.stringify(attempts[0]),
      );
      assert.equal((await counter(single, 'cancelled')) - before, 1);
    }));

  test('stopping gives back claims not yet sent and lets the one in flight finish', () =>
    run(async () => {
      const single = h.withEnv({ EDS_WEBHOOK_ENDPOINT_CONCURRENCY: '1', EDS_WEBHOOK_TIMEOUT_MS: '5000' });
      const org = await h.fixtures.organization();
      const secret = { value: '' };
      const receiver = await receiverFor(secret);
      const sub = await h.subscribe(receiver.url, { org });
      secret.value = sub.secret;
      receiver.setResponder(() => ({ status: 204, delayMs: 200 }));
      const w = startDeliveryWorker(single);
      const events = await h.finalize(3, org, single);
      await receiver.waitFor(1);
      const mine = async () => (await h.deliveries()).filter((d) => events.includes(d.event_id));
      assert.deepEqual(
        (await mine()).map((d) => d.status),
        ['sending', 'sending', 'sending'],
        'all claimed',
      );
      // On SQLite other processes' workers learn of work from the delivery channel's counter.
      const signals = async () =>
        kind === 'sqlite'
          ? Number(
              (
                await sql<{ version: number }>`select version from change_signals
                  where channel = 'eds_webhook_deliveries'`.execute(h.services.store.db)
              ).rows[0]?.version ?? 0,
            )
          : 0;
      const signalled = await signals();
      await w.stop();
      const rows = await mine();
      assert.equal(rows.filter((d) => d.status === 'succeeded').length, 1, 'the attempt in flight finished');
      if (kind === 'sqlite') assert.ok((await signals()) > signalled, 'the claims given back are announced');
      const released = rows.filter((d) => d.status === 'pending');
      assert.equal(released.length, 2);
      for (const d of released) {
        assert.equal(d.lease_token, null);
        assert.equal(d.attempt_count, 0, 'an attempt never made is not counted');
        assert.ok(d.due_at <= Date.now());
      }
      assert.equal(receiver.received.length, 1);
    }));

  test('redeliver and recover re-queue under the same Delivery-Id', () =>
    run(async () => {
      const { org, receiver, sub } = await setup();
      let fail = true;
      receiver.setResponder(() => ({ status: fail ? 400 : 204 }));
      const since = Date.now() - 1;
      const events = await h.finalize(2, org);
      for (const e of events) await h.waitForStatus(e, 'failed');
      fail = false;
      const recovered = await recoverDeliveries(h.services, { subscriptionId: sub.id, sinceMs: since });
      assert.equal(recovered.requeued, 2);
      for (const e of events) await h.waitForStatus(e, 'succeeded');
      const [one] = await h.deliveries(events[0]);
      assert.deepEqual(
        receiver.received.filter((r) => r.headers['eds-event-id'] === events[0]).map((r) => r.deliveryId),
        [one!.id, one!.id],
      );
      // Nothing failed remains in the window: recovering again re-queues nothing.
      assert.equal(
        (await recoverDeliveries(h.services, { subscriptionId: sub.id, sinceMs: since })).requeued,
        0,
      );

      const again = await redeliverEvent(h.services, events[0]!);
      assert.deepEqual(again.deliveries, [
        { delivery_id: one!.id, subscription_id: sub.id, action: 'requeued' },
      ]);
      await receiver.waitFor(5);
      await h.waitForStatus(events[0]!, 'succeeded');
      const listed = await listDeliveryViews(h.services, { eventId: events[0] });
      assert.equal(listed.deliveries.length, 1);
      const view = listed.deliveries[0]!;
      assert.deepEqual(
        view.attempts.map((a) => [a.attempt, a.status_code, a.outcome]),
        [
          [1, 400, 'failed'],
          [2, 204, 'succeeded'],
          [3, 204, 'succeeded'],
        ],
      );
      const text = JSON.stringify(listed);
      assert.ok(!text.includes(receiver.url) && !text.includes('whsec_') && !text.includes('resources'));
    }));
});

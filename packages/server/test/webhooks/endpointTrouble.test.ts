/**
 * Endpoints in trouble: a receiver down past EDS_WEBHOOK_PAUSE_AFTER (on an injected clock) is
 * paused, with one error log line and a metric; new events still get deliveries, which wait
 * unattempted; the operator sees since when and why (`eds webhook show/list`), lists the
 * exhausted deliveries (`failures`), resumes (what waited goes out oldest first) and redelivers
 * the exhausted ones (`redeliver --endpoint --since`). Every event reaches the receiver once.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createLogger } from '../../src/logger.js';
import { nextDueAt } from '../../src/store/webhookDeliveries.js';
import { toIso } from '../../src/time.js';
import { startDeliveryWorker } from '../../src/webhooks/worker.js';
import { cliEnv, runEds } from '../support/cli.js';
import { testClock } from '../support/clock.js';
import { forEachStore } from '../support/stores.js';
import { waitFor } from '../support/waitFor.js';
import { createHarness, FAST_WEBHOOK_ENV, type Harness } from './support/harness.js';
import { startReceiver } from './support/receiver.js';

const HOUR_MS = 3_600_000;

forEachStore('webhook endpoints in trouble', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind);
  });
  after(() => h.close());

  test('a receiver down past the threshold is paused, nothing is lost, resume sends what waited in order', async () => {
    // Ahead of the wall clock, so that what the operator's commands schedule "now" is due.
    const clock = testClock(Date.now());
    const logs: { level: number; msg: string; subscription_id?: string; reason?: string }[] = [];
    const logger = createLogger('info', { write: (line: string) => void logs.push(JSON.parse(line)) });
    const services = h.withEnv(
      { EDS_WEBHOOK_ENDPOINT_CONCURRENCY: '1', EDS_WEBHOOK_PAUSE_AFTER: '72h' },
      { clock: clock.now, logger },
    );
    const secret = { value: '' };
    const receiver = await startReceiver(() => secret.value, { now: clock.now });
    let up = false;
    receiver.setResponder(() => ({ status: up ? 204 : 503 }));
    const worker = startDeliveryWorker(services);
    const env = cliEnv(h.database, FAST_WEBHOOK_ENV);
    // biome-ignore lint/suspicious/noExplicitAny: command output is read field by field in asserts
    const eds = async (...args: string[]): Promise<any> => {
      const result = await runEds(args, env);
      assert.equal(result.code, 0, result.stderr);
      return JSON.parse(result.stdout);
    };
    try {
      const org = await h.fixtures.organization();
      const sub = await h.subscribe(receiver.url, { org });
      secret.value = sub.secret;
      const status = async (eventId: string) => (await h.deliveries(eventId))[0]!.status;
      const subscription = () =>
        h.services.store.db
          .selectFrom('webhook_subscriptions')
          .selectAll()
          .where('id', '=', sub.id)
          .executeTakeFirstOrThrow();

      // The first event's round is exhausted while the receiver is down (hours of retries).
      const startedAt = clock.now();
      const [exhausted] = await h.finalize(1, org, services);
      await waitFor(async () => {
        const [d] = await h.deliveries(exhausted);
        // Time moves only while the delivery waits for its next retry, never under a claim.
        if (d!.status === 'pending' && d!.due_at > clock.now()) clock.advance(d!.due_at - clock.now());
        return d!.status === 'failed';
      }, 'the first delivery exhausted');
      const failingSince = (await subscription()).failing_since;
      assert.ok(failingSince !== null && failingSince >= startedAt, 'failing since the first failed attempt');
      assert.equal((await subscription()).paused_at, null, 'not paused before the threshold');

      // Past 72 h of failures, the next failed attempt pauses the endpoint.
      clock.advance(72 * HOUR_MS);
      const [pausing] = await h.finalize(1, org, services);
      await waitFor(async () => (await subscription()).paused_at !== null, 'the endpoint paused');
      const pausedAt = (await subscription()).paused_at!;
      clock.advance(1000);
      const [waiting1] = await h.finalize(1, org, services);
      clock.advance(1000);
      const [waiting2] = await h.finalize(1, org, services);

      for (const e of [pausing!, waiting1!, waiting2!]) assert.equal(await status(e), 'pending');
      for (const e of [waiting1!, waiting2!]) assert.equal((await h.deliveries(e))[0]!.attempt_count, 0);
      assert.equal(
        await nextDueAt(h.services.store.db),
        undefined,
        'nothing of a paused endpoint is claimable',
      );
      const pauseLines = logs.filter((l) => l.level === 50 && l.subscription_id === sub.id);
      assert.equal(pauseLines.length, 1, 'one error line for the pause');
      assert.match(pauseLines[0]!.reason ?? '', /HTTP 503/);
      const pauses = await services.metrics.webhookEndpointPauses.get();
      assert.equal(pauses.values[0]?.value, 1);
      const gauge = await services.metrics.webhookEndpointsPaused.get();
      assert.equal(gauge.values[0]?.value, 1);

      const shown = await eds('webhook', 'show', sub.id);
      assert.equal(shown.paused.since, toIso(pausedAt));
      assert.match(shown.paused.reason, /HTTP 503/);
      assert.equal(shown.failing_since, toIso(failingSince));
      assert.equal(shown.delivering, false);
      const listed = await eds('webhook', 'list', '--org', org);
      assert.deepEqual(listed.subscriptions[0].paused, shown.paused);

      const failures = await eds('webhook', 'failures', '--org', org);
      assert.deepEqual(
        failures.failures.map((f: { event_id: string }) => f.event_id),
        [exhausted],
      );
      assert.equal(failures.failures[0].attempt_count, 4);
      assert.equal(failures.failures[0].last_status_code, 503);
      assert.doesNotMatch(JSON.stringify(failures), /hooks\/eds|whsec_/);

      // The receiver is back: resume sends what waited, oldest first.
      up = true;
      const sentBefore = receiver.received.length;
      const resumed = await eds('webhook', 'resume', sub.id);
      assert.equal(resumed.waiting_deliveries, 3);
      for (const e of [pausing!, waiting1!, waiting2!]) {
        await waitFor(async () => (await status(e)) === 'succeeded', `${e} delivered`);
      }
      assert.deepEqual(
        receiver.received.slice(sentBefore).map((r) => r.headers['eds-event-id']),
        [pausing, waiting1, waiting2],
      );
      assert.equal((await subscription()).paused_at, null);

      // The exhausted one goes out again under its Delivery-Id.
      const redelivered = await eds(
        'webhook',
        'redeliver',
        '--endpoint',
        sub.id,
        '--since',
        toIso(startedAt),
      );
      assert.equal(redelivered.requeued, 1);
      await waitFor(
        async () => (await status(exhausted!)) === 'succeeded',
        'the exhausted event redelivered',
      );
      const accepted = receiver.received.slice(sentBefore).map((r) => r.headers['eds-event-id']);
      assert.deepEqual([...accepted].sort(), [exhausted, pausing, waiting1, waiting2].sort(), 'each once');
    } finally {
      await worker.stop();
      await receiver.close();
    }
  });
});

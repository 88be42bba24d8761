/**
 * `eds webhook deliveries --org ID [--since ISO] --format ndjson|csv`: a report an operator can
 * hand to a partner asking "did you send it?": ids, times, attempts and outcomes; never bodies,
 * receiver URLs or secrets.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { toIso } from '../../src/time.js';
import { startDeliveryWorker } from '../../src/webhooks/worker.js';
import { cliEnv, runEds } from '../support/cli.js';
import { forEachStore } from '../support/stores.js';
import { createHarness, FAST_WEBHOOK_ENV, type Harness } from './support/harness.js';
import { startReceiver } from './support/receiver.js';

forEachStore('webhook delivery report', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind);
  });
  after(() => h.close());

  test('ndjson and csv list each delivery and attempt of the organization since a time, without bodies, URLs or secrets', async () => {
    const secret = { value: '' };
    const receiver = await startReceiver(() => secret.value, { path: '/hooks/eds?route=partner-key-123' });
    // The later event's first attempt fails, so the report shows a retry before the success.
    let answered = 0;
    receiver.setResponder(() => ({ status: answered++ === 1 ? 503 : 204 }));
    const worker = startDeliveryWorker(h.services);
    try {
      const org = await h.fixtures.organization();
      const other = await h.fixtures.organization();
      const sub = await h.subscribe(receiver.url, { org });
      await h.subscribe(receiver.url, { org: other });
      secret.value = sub.secret;
      const [early] = await h.finalize(1, org);
      await h.waitForStatus(early!, 'succeeded');
      const [late] = await h.finalize(1, org);
      await h.waitForStatus(late!, 'succeeded');
      const lateRow = (await h.deliveries(late))[0]!;
      const env = cliEnv(h.database, FAST_WEBHOOK_ENV);
      const since = toIso(lateRow.created_at);

      const ndjson = await runEds(
        ['webhook', 'deliveries', '--org', org, '--since', since, '--format', 'ndjson'],
        env,
      );
      assert.equal(ndjson.code, 0, ndjson.stderr);
      const lines = ndjson.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.equal(lines.length, 1, 'only the delivery since the time, only of this organization');
      assert.equal(lines[0].event_id, late);
      assert.equal(lines[0].delivery_id, lateRow.id);
      assert.deepEqual(
        lines[0].attempts.map((a: { status_code: number; outcome: string }) => [a.status_code, a.outcome]),
        [
          [503, 'retry'],
          [204, 'succeeded'],
        ],
      );

      const csv = await runEds(['webhook', 'deliveries', '--org', org, '--format', 'csv'], env);
      assert.equal(csv.code, 0, csv.stderr);
      const [header, ...rows] = csv.stdout.trim().split('\n');
      assert.equal(
        header,
        'organization_id,subscription_id,event_id,delivery_id,created_at,status,attempt,attempt_started_at,duration_ms,status_code,error,outcome',
      );
      const cells = rows.map((r) => r.split(','));
      assert.deepEqual(
        cells.map((c) => [c[2], c[6], c[9], c[11]]),
        [
          [late, '1', '503', 'retry'],
          [late, '2', '204', 'succeeded'],
          [early, '1', '204', 'succeeded'],
        ],
      );
      const body = (
        await h.services.store.db
          .selectFrom('webhook_events')
          .select('body')
          .where('id', '=', late!)
          .executeTakeFirstOrThrow()
      ).body;
      const documentId = JSON.parse(body).resources.document_id as string;
      for (const output of [ndjson.stdout, csv.stdout]) {
        assert.doesNotMatch(output, /partner-key-123|127\.0\.0\.1|whsec_/);
        assert.ok(!output.includes(documentId), 'no body content');
      }
    } finally {
      await worker.stop();
      await receiver.close();
    }
  });
});

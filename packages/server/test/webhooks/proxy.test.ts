/**
 * Deliveries through an HTTP CONNECT forward proxy (EDS_WEBHOOK_PROXY_URL), a real proxy process
 * on loopback: delivered with the proxy's credentials; a proxy that wants credentials, refuses
 * the target or cannot be reached is a retryable failure with its own class; the service's own
 * address checks run before the proxy is asked to connect.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Services } from '../../src/services.js';
import { startDeliveryWorker } from '../../src/webhooks/worker.js';
import { freePort } from '../support/processes.js';
import { forEachStore } from '../support/stores.js';
import { waitFor } from '../support/waitFor.js';
import { type ForwardProxy, startForwardProxy } from './support/forwardProxy.js';
import { attemptsOf, createHarness, type Harness } from './support/harness.js';
import { startReceiver, type TestReceiver } from './support/receiver.js';

const CREDENTIALS = 'eds-egress:pr0xy-s3cret';

forEachStore('webhook deliveries through a forward proxy', (kind) => {
  let h: Harness;
  let proxy: ForwardProxy;
  let receiver: TestReceiver;
  const secrets = new Map<string, string>();
  before(async () => {
    h = await createHarness(kind);
    receiver = await startReceiver(() => [...secrets.values()]);
    proxy = await startForwardProxy({ credentials: CREDENTIALS });
  });
  after(async () => {
    await proxy.close();
    await receiver.close();
    await h.close();
  });

  /** One event to a new subscription of `url`, delivered by a worker with these services. */
  async function deliverOne(services: Services, url = receiver.url) {
    const org = await h.fixtures.organization();
    const sub = await h.subscribe(url, { org });
    secrets.set(sub.id, sub.secret);
    const worker = startDeliveryWorker(services);
    try {
      const [eventId] = await h.finalize(1, org, services);
      await waitFor(
        async () => ['succeeded', 'failed'].includes((await h.deliveries(eventId))[0]?.status ?? ''),
        'the delivery finished',
      );
      const [row] = await h.deliveries(eventId);
      assert.ok(row);
      const attempts = await attemptsOf(h.services, row.id);
      return { row, attempts: attempts.map((a) => [a.error_class, a.outcome]) };
    } finally {
      await worker.stop();
    }
  }
  const viaProxy = (proxyUrl: string, extra: Record<string, string> = {}) =>
    h.withEnv({ EDS_WEBHOOK_PROXY_URL: proxyUrl, ...extra });

  test('delivered through the proxy, which authenticates the service', async () => {
    const before = receiver.received.length;
    const { row } = await deliverOne(viaProxy(`http://${CREDENTIALS}@127.0.0.1:${proxy.port}`));
    assert.equal(row.status, 'succeeded');
    assert.deepEqual(proxy.connects, [new URL(receiver.url).host], 'the tunnel went to the receiver');
    const got = receiver.received.slice(before);
    assert.equal(got.length, 1);
    assert.equal(got[0]!.verification.ok, true);
    assert.equal(got[0]!.headers['proxy-authorization'], undefined, 'proxy credentials stay with the proxy');
  });

  test('a proxy that wants credentials, or refuses the target, is a retryable proxy_refused', async () => {
    const withoutCredentials = await deliverOne(viaProxy(`http://127.0.0.1:${proxy.port}`));
    const strictProxy = await startForwardProxy({ denyPort: receiver.port });
    try {
      const refusingTarget = await deliverOne(viaProxy(`http://127.0.0.1:${strictProxy.port}`));
      for (const { row, attempts } of [withoutCredentials, refusingTarget]) {
        assert.equal(row.status, 'failed', 'the round ran out');
        assert.deepEqual(attempts, [
          ['proxy_refused', 'retry'],
          ['proxy_refused', 'retry'],
          ['proxy_refused', 'retry'],
          ['proxy_refused', 'failed'],
        ]);
      }
      assert.deepEqual(strictProxy.connects, []);
    } finally {
      await strictProxy.close();
    }
  });

  test('a proxy that cannot be reached is a retryable proxy_unreachable', async () => {
    const { row, attempts } = await deliverOne(viaProxy(`http://127.0.0.1:${await freePort()}`));
    assert.equal(row.status, 'failed');
    assert.deepEqual(attempts, [
      ['proxy_unreachable', 'retry'],
      ['proxy_unreachable', 'retry'],
      ['proxy_unreachable', 'retry'],
      ['proxy_unreachable', 'failed'],
    ]);
  });

  test('the egress policy refuses a target before the proxy is asked', async () => {
    const connectsBefore = proxy.connects.length;
    const strict = viaProxy(`http://${CREDENTIALS}@127.0.0.1:${proxy.port}`, {
      EDS_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false',
    });
    // Stored before the policy tightened: the commands would refuse this endpoint now.
    const { row, attempts } = await deliverOne(strict, receiver.url.replace('127.0.0.1', 'localhost'));
    assert.equal(row.status, 'failed');
    assert.deepEqual(attempts, [['egress_refused', 'failed']]);
    assert.equal(proxy.connects.length, connectsBefore, 'the proxy was never asked to connect');
  });
});

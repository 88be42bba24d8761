/**
 * The egress policy acts before any connection: an IP-literal receiver in any spelling is judged
 * as the address it names, and a refused target is the terminal `egress_refused` without a socket
 * being opened, whatever listens there. Operators are refused such endpoints up front.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Services } from '../../src/services.js';
import { endpointHostRefusal } from '../../src/webhooks/egress.js';
import { startDeliveryWorker } from '../../src/webhooks/worker.js';
import { cliEnv, runEds } from '../support/cli.js';
import { forEachStore } from '../support/stores.js';
import { attemptsOf, createHarness, FAST_WEBHOOK_ENV, type Harness } from './support/harness.js';

/** A loopback listener that counts the TCP connections it accepts (and answers none). */
async function countingListener(
  host = '127.0.0.1',
): Promise<{ port: number; count(): number; close(): Promise<void> }> {
  let accepted = 0;
  const server: Server = createServer((socket) => {
    accepted++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    port: (server.address() as { port: number }).port,
    count: () => accepted,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Every spelling of loopback an attacker tried, and IPv4-mapped IPv6. */
const LOOPBACK_SPELLINGS = [
  'http://127.0.0.1:PORT/',
  'http://2130706433:PORT/',
  'http://0177.0.0.1:PORT/',
  'http://0x7f.1:PORT/',
  'http://127.1:PORT/',
  'http://[::ffff:127.0.0.1]:PORT/',
  'https://[::ffff:7f00:1]:PORT/',
];
const ALWAYS_REFUSED = [
  'http://0.0.0.0:PORT/',
  'http://0:PORT/',
  'http://[::]:PORT/',
  'http://169.254.169.254/latest/meta-data/',
  'http://[fd00:ec2::254]/',
  'http://100.100.100.200/',
  'http://[::ffff:a9fe:a9fe]/',
];

describe('egress policy on endpoint URLs', () => {
  test('every spelling of a loopback address is refused unless private networks are allowed', () => {
    for (const url of LOOPBACK_SPELLINGS.map((u) => u.replace('PORT', '8080'))) {
      assert.match(endpointHostRefusal(url, false) ?? '', /loopback or private/, url);
      assert.equal(endpointHostRefusal(url, true), undefined, url);
    }
    assert.match(endpointHostRefusal('http://localhost:1/', false) ?? '', /loopback/);
  });

  test('unspecified and metadata addresses are refused even with private networks allowed', () => {
    for (const url of ALWAYS_REFUSED.map((u) => u.replace('PORT', '8080'))) {
      assert.match(endpointHostRefusal(url, true) ?? '', /unspecified|metadata/, url);
    }
    assert.equal(endpointHostRefusal('https://hooks.example.test/x', false), undefined);
    assert.equal(endpointHostRefusal('https://93.184.216.34/x', false), undefined);
  });
});

forEachStore('egress policy at delivery', (kind) => {
  let h: Harness;
  let listener: Awaited<ReturnType<typeof countingListener>>;
  before(async () => {
    h = await createHarness(kind);
    listener = await countingListener();
  });
  after(async () => {
    await listener.close();
    await h.close();
  });

  /**
   * Subscriptions stored as if made before the policy tightened (the operator commands refuse
   * these URLs now), delivered by a worker with the given settings.
   */
  async function deliverTo(urls: string[], services: Services) {
    const org = await h.fixtures.organization();
    const subs = new Map<string, string>();
    for (const url of urls) {
      const sub = await h.subscribe('http://receiver.example.test/hooks', { org });
      await h.services.store.db
        .updateTable('webhook_subscriptions')
        .set({ url })
        .where('id', '=', sub.id)
        .execute();
      subs.set(sub.id, url);
    }
    const worker = startDeliveryWorker(services);
    try {
      const [eventId] = await h.finalize(1, org, services);
      await h.waitForStatus(eventId!, 'failed', 20_000);
      const outcomes = new Map<string, unknown>();
      for (const d of await h.deliveries(eventId)) {
        const attempts = await attemptsOf(h.services, d.id);
        outcomes.set(
          subs.get(d.subscription_id)!,
          attempts.map((a) => [a.error_class, a.outcome]),
        );
      }
      return outcomes;
    } finally {
      await worker.stop();
    }
  }

  test('loopback in every spelling is refused terminally and no connection is opened', async () => {
    const strict = h.withEnv({ EDS_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' });
    const urls = LOOPBACK_SPELLINGS.map((u) => u.replace('PORT', String(listener.port)));
    const outcomes = await deliverTo(urls, strict);
    for (const url of urls) assert.deepEqual(outcomes.get(url), [['egress_refused', 'failed']], url);
    assert.equal(listener.count(), 0, 'the loopback listener saw no connection');
  });

  test('[::1] with nothing listening is egress_refused, not connection_refused', async () => {
    const strict = h.withEnv({ EDS_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' });
    const outcomes = await deliverTo(['http://[::1]:9/'], strict);
    assert.deepEqual(outcomes.get('http://[::1]:9/'), [['egress_refused', 'failed']]);
  });

  test('with private networks allowed, unspecified and metadata addresses are still refused unopened', async () => {
    const urls = ALWAYS_REFUSED.map((u) => u.replace('PORT', String(listener.port)));
    const outcomes = await deliverTo(urls, h.services);
    for (const url of urls) assert.deepEqual(outcomes.get(url), [['egress_refused', 'failed']], url);
    assert.equal(listener.count(), 0, '0.0.0.0 did not reach the 127.0.0.1 listener');
  });
});

describe('eds webhook create, update and activate under the egress policy', () => {
  let h: Harness;
  before(async () => {
    h = await createHarness('sqlite');
  });
  after(async () => {
    await h.close();
  });
  const env = () => cliEnv(h.database, FAST_WEBHOOK_ENV);

  test('create refuses metadata and unspecified hosts whatever the settings, naming the reason', async () => {
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00:ec2::254]/',
      'http://0.0.0.0:8080/',
    ]) {
      const result = await runEds(['webhook', 'create', '--org', h.org, '--url', url], env());
      assert.notEqual(result.code, 0, url);
      assert.match(
        result.stderr,
        /egress policy refuses the endpoint: its host is an? (cloud metadata|unspecified)/,
      );
    }
    const strict = { ...env(), EDS_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' };
    const loopback = await runEds(['webhook', 'create', '--org', h.org, '--url', 'http://0x7f.1:9/'], strict);
    assert.notEqual(loopback.code, 0);
    assert.match(loopback.stderr, /loopback or private network address/);
    const subs = await h.services.store.db.selectFrom('webhook_subscriptions').select('id').execute();
    assert.equal(subs.length, 0, 'nothing was created');
  });

  test('update and activate refuse an endpoint the policy refuses', async () => {
    const sub = await h.subscribe('http://receiver.example.test/hooks', { activate: false });
    const update = await runEds(['webhook', 'update', sub.id, '--url', 'http://100.100.100.200/'], env());
    assert.notEqual(update.code, 0);
    assert.match(update.stderr, /cloud metadata address/);
    await h.services.store.db
      .updateTable('webhook_subscriptions')
      .set({ url: 'http://[::ffff:169.254.169.254]/' })
      .where('id', '=', sub.id)
      .execute();
    const activate = await runEds(
      ['webhook', 'activate', sub.id, '--routes', 'transcript', '--by', 'A', '--reference', 'CHG-1'],
      env(),
    );
    assert.notEqual(activate.code, 0);
    assert.match(activate.stderr, /cloud metadata address/);
    const row = await h.services.store.db
      .selectFrom('webhook_subscriptions')
      .select(['enabled', 'active_revision'])
      .where('id', '=', sub.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { enabled: 0, active_revision: null });
  });
});

/**
 * `eds webhook check ID` and the checks `activate` runs: each activation confirmation passed or
 * failed with the reason, the receiver reached (directly or through the forward proxy) with its
 * TLS certificate verified, and nothing sent to it. Activation refuses on a failed confirmation
 * unless forced with a reason, which is recorded with the activation.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { cliEnv, runEds } from '../support/cli.js';
import { forEachStore } from '../support/stores.js';
import { type ForwardProxy, startForwardProxy } from './support/forwardProxy.js';
import { createHarness, FAST_WEBHOOK_ENV, type Harness } from './support/harness.js';
import { startReceiver, type TestReceiver } from './support/receiver.js';

/** An https receiver with a self-signed certificate for 127.0.0.1, counting requests and handshakes. */
async function selfSignedReceiver(dir: string) {
  const key = join(dir, 'receiver.key');
  const cert = join(dir, 'receiver.crt');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: 'ignore' },
  );
  let requests = 0;
  let connections = 0;
  const server: Server = createHttpsServer(
    { key: readFileSync(key), cert: readFileSync(cert) },
    (_req, res) => {
      requests++;
      res.writeHead(204).end();
    },
  );
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    requests: () => requests,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// biome-ignore lint/suspicious/noExplicitAny: command output is read field by field in asserts
type Json = any;

forEachStore('webhook readiness confirmations', (kind) => {
  let h: Harness;
  let tls: Awaited<ReturnType<typeof selfSignedReceiver>>;
  let plain: TestReceiver;
  let proxy: ForwardProxy;
  before(async () => {
    h = await createHarness(kind);
    tls = await selfSignedReceiver(h.database.dir);
    plain = await startReceiver(() => []);
    proxy = await startForwardProxy();
  });
  after(async () => {
    await proxy.close();
    await plain.close();
    await tls.close();
    await h.close();
  });
  const eds = async (args: string[], extra: Record<string, string> = {}) => {
    const result = await runEds(args, cliEnv(h.database, { ...FAST_WEBHOOK_ENV, ...extra }));
    return { ...result, json: result.stdout.trim() === '' ? undefined : (JSON.parse(result.stdout) as Json) };
  };
  const byName = (json: Json) =>
    Object.fromEntries(json.confirmations.map((c: Json) => [c.name, { passed: c.passed, reason: c.reason }]));
  const activate = ['--routes', 'transcript', '--by', 'Dr. Approver', '--reference', 'CHG-9'];

  test('a receiver with a self-signed certificate fails the network confirmation with the reason; nothing is sent', async () => {
    const sub = await h.subscribe(tls.url, { activate: false, correlation: 'not_confirmed_runtime_blocked' });
    const checked = await eds(['webhook', 'check', sub.id]);
    assert.equal(checked.code, 1, 'a failed confirmation is a failed command');
    assert.equal(checked.json.passed, false);
    const confirmations = byName(checked.json);
    assert.deepEqual(Object.keys(confirmations), [
      'approved_routes',
      'least_privilege_scopes',
      'signing_setup',
      'receiver_correlation',
      'network_reachability',
      'audit_readiness',
    ]);
    assert.equal(confirmations.network_reachability.passed, false);
    assert.match(
      confirmations.network_reachability.reason,
      /tls_error \((DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)\)/,
    );
    assert.equal(confirmations.signing_setup.passed, true);
    assert.equal(confirmations.audit_readiness.passed, true);
    assert.equal(confirmations.approved_routes.passed, false, 'not activated yet');
    assert.equal(confirmations.receiver_correlation.passed, false);
    assert.ok(tls.connections() >= 1, 'the handshake was tried');
    assert.equal(tls.requests(), 0, 'no request reached the receiver');

    const refused = await eds(['webhook', 'activate', sub.id, ...activate]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /activation refused: network_reachability: .*tls_error/);
    assert.doesNotMatch(refused.stderr, /receiver_correlation/, 'correlation does not block activation');
    const row = () =>
      h.services.store.db
        .selectFrom('webhook_subscriptions')
        .selectAll()
        .where('id', '=', sub.id)
        .executeTakeFirstOrThrow();
    assert.equal((await row()).enabled, 0);

    const noReason = await eds(['webhook', 'activate', sub.id, ...activate, '--force']);
    assert.notEqual(noReason.code, 0);
    assert.match(noReason.stderr, /--force needs --reason/);

    const forced = await eds([
      'webhook',
      'activate',
      sub.id,
      ...activate,
      '--force',
      '--reason',
      'certificate replaced Monday',
    ]);
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(forced.json.forced_reason, 'certificate replaced Monday');
    const activation = await h.services.store.db
      .selectFrom('webhook_activations')
      .select('readiness')
      .where('id', '=', (await row()).activation_id!)
      .executeTakeFirstOrThrow();
    assert.deepEqual(JSON.parse(activation.readiness).forced, {
      reason: 'certificate replaced Monday',
      failed: ['network_reachability'],
    });
    assert.equal(tls.requests(), 0);
  });

  test('every confirmation passes for a reachable, activated, confirmed receiver, also through the proxy', async () => {
    const sub = await h.subscribe(plain.url, { activate: false });
    const activated = await eds(['webhook', 'activate', sub.id, ...activate]);
    assert.equal(activated.code, 0, activated.stderr);
    assert.equal(activated.json.forced_reason, null);
    const settings: Record<string, string>[] = [
      {},
      { EDS_WEBHOOK_PROXY_URL: `http://127.0.0.1:${proxy.port}` },
    ];
    for (const extra of settings) {
      const checked = await eds(['webhook', 'check', sub.id], extra);
      assert.equal(checked.code, 0, checked.stdout);
      assert.equal(checked.json.passed, true);
      assert.match(
        byName(checked.json).network_reachability.reason,
        'EDS_WEBHOOK_PROXY_URL' in extra ? /through the forward proxy/ : /directly/,
      );
    }
    assert.deepEqual(proxy.connects, [new URL(plain.url).host]);
    assert.equal(plain.received.length, 0, 'checks send nothing');
  });
});

/** `eds webhook …` as an operator runs it: one JSON object on stdout, errors on stderr. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { EDS_BIN } from '../support/cli.js';
import { createHarness, type Harness, webhookEnv } from './support/harness.js';

const run = promisify(execFile);

let h: Harness;
before(async () => {
  h = await createHarness('sqlite');
});
after(async () => {
  await h.close();
});

// biome-ignore lint/suspicious/noExplicitAny: command output is read field by field in asserts
type Json = any;

async function eds(...args: string[]): Promise<{ code: number; json: Json; stderr: string; stdout: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [EDS_BIN, ...args], {
      cwd: h.database.dir,
      env: { PATH: process.env.PATH ?? '', ...webhookEnv(h.database) },
    });
    return { code: 0, json: JSON.parse(stdout), stderr, stdout };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, json: undefined, stderr: e.stderr, stdout: e.stdout };
  }
}

test('eds webhook: create, activate, correlation, deliveries, revoke-readiness, redeliver, recover', async () => {
  const url = 'http://127.0.0.1:9/hooks';
  const created = await eds('webhook', 'create', '--org', h.org, '--url', url);
  assert.equal(created.code, 0, created.stderr);
  for (const key of ['subscription_id', 'signing_secret', 'enabled', 'revision', 'correlation_status']) {
    assert.ok(key in created.json, key);
  }
  assert.equal(created.json.enabled, false);
  assert.equal(created.json.revision, 1);
  assert.equal(created.json.correlation_status, 'not_confirmed_runtime_blocked');
  assert.match(created.json.signing_secret, /^whsec_/);
  const id: string = created.json.subscription_id;

  const activated = await eds(
    'webhook',
    'activate',
    id,
    '--routes',
    'transcript,audio',
    '--by',
    'Dr. Approver',
    '--reference',
    'CHG-7',
    '--force',
    '--reason',
    'no receiver listens in this test',
  );
  assert.equal(activated.code, 0, activated.stderr);
  assert.equal(activated.json.subscription_id, id);
  assert.equal(activated.json.revision, 1);
  assert.deepEqual(Object.keys(activated.json.api_key).sort(), ['key_id', 'scopes', 'token']);
  assert.deepEqual(activated.json.api_key.scopes, ['encounters:read', 'documents:read', 'recordings:read']);
  assert.match(activated.json.api_key.token, /^eds_live_/);
  assert.match(activated.stderr, /correlation/, 'says what still blocks delivery');

  const confirmed = await eds('webhook', 'correlation', id, 'confirmed');
  assert.equal(confirmed.code, 0, confirmed.stderr);
  assert.equal(confirmed.json.subscription_id, id);
  assert.equal(confirmed.json.correlation_status, 'confirmed');
  assert.equal(confirmed.json.delivering, true);
  assert.ok(!confirmed.stdout.includes(created.json.signing_secret), 'the secret is never printed again');

  const [eventId] = await h.finalize(1);
  const listed = await eds('webhook', 'deliveries', '--subscription', id);
  assert.equal(listed.code, 0, listed.stderr);
  assert.equal(listed.json.deliveries.length, 1);
  assert.equal(listed.json.deliveries[0].event_id, eventId);
  assert.equal(listed.json.deliveries[0].status, 'pending');
  assert.deepEqual(listed.json.deliveries[0].attempts, []);
  assert.ok(!listed.stdout.includes(url) && !listed.stdout.includes('whsec_'));
  const byEvent = await eds('webhook', 'deliveries', '--event', eventId!);
  assert.equal(byEvent.json.deliveries[0].delivery_id, listed.json.deliveries[0].delivery_id);

  const revoked = await eds('webhook', 'revoke-readiness', id);
  assert.equal(revoked.code, 0, revoked.stderr);
  assert.equal(revoked.json.subscription_id, id);
  assert.equal(revoked.json.cancelled, 1);

  const refused = await eds('webhook', 'redeliver', eventId!, '--subscription', id);
  assert.notEqual(refused.code, 0);
  assert.equal(refused.stdout, '');
  assert.match(refused.stderr, /not eligible/);

  const bad = await eds('webhook', 'correlation', id, 'maybe');
  assert.notEqual(bad.code, 0);
  assert.equal(bad.stdout, '');

  const again = await eds(
    'webhook',
    'activate',
    id,
    '--routes',
    'transcript',
    '--by',
    'A',
    '--reference',
    'CHG-8',
    '--force',
    '--reason',
    'no receiver listens in this test',
  );
  assert.equal(again.code, 0, again.stderr);
  assert.equal(again.json.replaced_api_key_id, activated.json.api_key.key_id);
  const redelivered = await eds('webhook', 'redeliver', eventId!);
  assert.equal(redelivered.code, 0, redelivered.stderr);
  assert.deepEqual(redelivered.json.deliveries, [
    { delivery_id: listed.json.deliveries[0].delivery_id, subscription_id: id, action: 'requeued' },
  ]);
  const recovered = await eds('webhook', 'recover', '--subscription', id, '--since', '2026-01-01T00:00:00Z');
  assert.equal(recovered.code, 0, recovered.stderr);
  assert.equal(recovered.json.subscription_id, id);
  assert.equal(recovered.json.requeued, 0, 'nothing failed');
});

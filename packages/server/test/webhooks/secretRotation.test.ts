/**
 * Signing-secret rotation (decisions.md, Rotation) with real processes: a real `eds worker`
 * delivers while `eds webhook rotate-secret` runs. Delivery never stops and needs no new
 * activation; the old secret signs until the grace ends, then the new one; no attempt is signed
 * with the wrong secret, and each carries one `v1=` signature.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import { getSubscription } from '../../src/store/webhookSubscriptions.js';
import { parseRfc3339 } from '../../src/time.js';
import { openSigningSecret } from '../../src/webhooks/signingSecret.js';
import { startDeliveryWorker } from '../../src/webhooks/worker.js';
import { cliEnv, EDS_BIN, edsJson, runEds } from '../support/cli.js';
import { TEST_DIGEST_SECRET } from '../support/fixtures.js';
import { forEachStore } from '../support/stores.js';
import { createHarness, FAST_WEBHOOK_ENV, type Harness, sleep, webhookEnv } from './support/harness.js';
import { type Received, startReceiver } from './support/receiver.js';

interface RotateOutput {
  signing_secret: string;
  rotated_by: string;
  new_secret_signs_from: string;
}

interface ShowOutput {
  revision: number;
  activated: boolean;
  delivering: boolean;
  signing: { signing_secret: 'current' | 'previous'; previous_signs_until: string | null };
  secret_rotations: { rotated_by: string; grace_seconds: number; new_secret_signs_from: string }[];
}

function signedAtMs(r: Received): number {
  assert.ok(r.verification.ok, `a delivery failed verification: ${JSON.stringify(r.verification)}`);
  return r.verification.timestamp * 1000;
}

function oneSignature(r: Received): void {
  const header = String(r.headers['eds-signature']);
  assert.equal(header.match(/v1=/g)?.length, 1, `one v1= signature per header, got ${header}`);
}

forEachStore('webhook secret rotation', (kind) => {
  let h: Harness;
  let env: Record<string, string>;
  before(async () => {
    h = await createHarness(kind);
    env = cliEnv(h.database, FAST_WEBHOOK_ENV);
  });
  after(async () => {
    await h.close();
  });

  test('rotated with a grace while a worker process delivers: no gap, the old secret signs until the switch, the new one after', async () => {
    const secrets: string[] = [];
    const receiver = await startReceiver(() => secrets);
    let child: ChildProcess | undefined;
    try {
      // An organization of its own: other tests' subscriptions get none of these events.
      const org = await h.fixtures.organization();
      const sub = await h.subscribe(receiver.url, { org });
      secrets.push(sub.secret);
      child = spawn(process.execPath, [EDS_BIN, 'worker'], {
        cwd: h.database.dir,
        env: { PATH: process.env.PATH ?? '', ...webhookEnv(h.database) },
        stdio: ['ignore', 'ignore', 'ignore'],
      });
      const events = await h.finalize(2, org);
      await receiver.waitFor(1, 20_000);

      // Generous grace: the receiver learns the new secret when the command returns.
      const rotated = await edsJson<RotateOutput>(
        ['webhook', 'rotate-secret', sub.id, '--grace', '6', '--by', 'Test Operator'],
        env,
      );
      secrets.push(rotated.signing_secret);
      const switchAt = parseRfc3339(rotated.new_secret_signs_from)!.ms;
      const shown = await edsJson<ShowOutput>(['webhook', 'show', sub.id], env);
      assert.equal(shown.activated, true, 'no new activation is needed');
      assert.equal(shown.delivering, true);
      assert.equal(shown.revision, 1, 'a rotation is not a new revision');
      assert.equal(shown.secret_rotations.at(-1)?.rotated_by, 'Test Operator');
      assert.equal(shown.secret_rotations.at(-1)?.grace_seconds, 6);

      // Events keep being finalized until one arrives signed with the new secret (a condition,
      // not a fixed wait), then a few more.
      const until = Date.now() + 60_000;
      while (!receiver.received.some((r) => r.signedWith === 1)) {
        if (Date.now() > until) throw new Error('no delivery was ever signed with the new secret');
        events.push(...(await h.finalize(1, org)));
        await sleep(150);
      }
      events.push(...(await h.finalize(3, org)));
      for (const e of events) await h.waitForStatus(e, 'succeeded', 20_000);

      const deliveredEvents = new Set(
        receiver.received.map((r) => (r.verification.ok ? r.verification.eventId : '')),
      );
      for (const e of events) assert.ok(deliveredEvents.has(e), `event ${e} was not delivered`);
      for (const r of receiver.received) {
        oneSignature(r);
        const at = signedAtMs(r);
        // Timestamps are whole seconds (floor of the signing time).
        if (r.signedWith === 0) assert.ok(at < switchAt, 'the old secret signed after the switch');
        else assert.ok(at > switchAt - 1000, 'the new secret signed before the switch');
      }
      assert.ok(receiver.received.some((r) => r.signedWith === 0));
      const after = await edsJson<ShowOutput>(['webhook', 'show', sub.id], env);
      assert.deepEqual(after.signing, { signing_secret: 'current', previous_signs_until: null });
    } finally {
      if (child && child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
      await receiver.close();
    }
  });

  test('--grace 0 switches at once: every event finalized after the command is signed with the new secret only', async () => {
    const secrets: string[] = [];
    const receiver = await startReceiver(() => secrets);
    const worker = startDeliveryWorker(h.services);
    try {
      const org = await h.fixtures.organization();
      const sub = await h.subscribe(receiver.url, { org });
      secrets.push(sub.secret);
      const before = await h.finalize(2, org);
      for (const e of before) await h.waitForStatus(e, 'succeeded');
      const rotated = await edsJson<RotateOutput>(['webhook', 'rotate-secret', sub.id, '--grace', '0'], env);
      secrets.push(rotated.signing_secret);
      assert.match(rotated.rotated_by, /\S/);
      const shown = await edsJson<ShowOutput>(['webhook', 'show', sub.id], env);
      assert.deepEqual(shown.signing, { signing_secret: 'current', previous_signs_until: null });
      const seen = receiver.received.length;
      const afterRotation = await h.finalize(3, org);
      for (const e of afterRotation) await h.waitForStatus(e, 'succeeded');
      const later = receiver.received.slice(seen);
      assert.ok(later.length >= 3);
      for (const r of later) {
        oneSignature(r);
        assert.equal(r.signedWith, 1, 'signed with the new secret');
      }
      for (const r of receiver.received.slice(0, seen)) assert.equal(r.signedWith, 0);
    } finally {
      await worker.stop();
      await receiver.close();
    }
  });

  test('with the key digest secret rotated, deliveries go on and the stored signing secret moves to the new digest secret', async () => {
    let secret = '';
    const receiver = await startReceiver(() => secret);
    const rotatedDigest = h.withEnv({
      EDS_KEY_DIGEST_SECRET: 'a-new-digest-secret-for-webhook-secrets-0123456789',
      EDS_KEY_DIGEST_SECRET_PREVIOUS: TEST_DIGEST_SECRET,
    });
    const worker = startDeliveryWorker(rotatedDigest);
    try {
      const org = await h.fixtures.organization();
      const sub = await h.subscribe(receiver.url, { org });
      secret = sub.secret;
      const [event] = await h.finalize(1, org);
      await h.waitForStatus(event!, 'succeeded');
      assert.equal(receiver.received.at(-1)?.signedWith, 0);
      const row = (await getSubscription(h.services.store.db, sub.id))!;
      const newOnly = { keyDigest: rotatedDigest.config.secrets.keyDigest, keyDigestPrevious: undefined };
      assert.equal(openSigningSecret(row.secret_ciphertext, sub.id, newOnly), sub.secret);
    } finally {
      await worker.stop();
      await receiver.close();
    }
  });

  test('a bad --grace changes nothing and says why', async () => {
    const sub = await h.subscribe('http://127.0.0.1:9/never', { org: await h.fixtures.organization() });
    const stored = async () =>
      h.services.store.db
        .selectFrom('webhook_subscriptions')
        .select(['secret_ciphertext', 'previous_secret_ciphertext', 'secret_switch_at'])
        .where('id', '=', sub.id)
        .executeTakeFirstOrThrow();
    const before = await stored();
    for (const [grace, message] of [
      ['-5', /cannot be negative/],
      ['soon', /whole seconds/],
      ['1.5', /whole seconds/],
    ] as const) {
      const r = await runEds(['webhook', 'rotate-secret', sub.id, `--grace=${grace}`], env);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, message);
      assert.equal(r.stdout, '');
    }
    assert.deepEqual(await stored(), before);
    const shown = await edsJson<ShowOutput>(['webhook', 'show', sub.id], env);
    assert.deepEqual(shown.secret_rotations, []);
  });
});

/**
 * The SDK's receiver against the service's real delivery worker: real signed deliveries over
 * loopback are verified by `createNodeWebhookHandler`, a redelivery of the same event is
 * acknowledged but deduplicated, a custom header prefix works, and a receiver holding the wrong
 * secret answers 401, which the worker treats as terminal.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { createHarness, type Harness, redeliverEvent, startDeliveryWorker } from '@eds/server/test-kit';
import {
  createNodeWebhookHandler,
  type NodeWebhookHandlerOptions,
  type VerifiedWebhook,
  WebhookDeduplicator,
  WebhookVerificationError,
} from '../src/webhooks/index.js';
import { observedClaims } from './support/observedClaims.js';

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function harness(env: Record<string, string> = {}): Promise<Harness> {
  const h = await createHarness('sqlite', env);
  cleanups.push(() => h.close());
  const worker = startDeliveryWorker(h.services);
  cleanups.push(() => worker.stop());
  return h;
}

/**
 * A listening server whose handler is attached later: the subscription (and so the secret)
 * needs the URL first.
 */
async function receiver(): Promise<{ url: string; attach(options: NodeWebhookHandlerOptions): void }> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/eds`,
    attach: (options) => server.on('request', createNodeWebhookHandler(options)),
  };
}

describe('SDK receiver ← real delivery worker', () => {
  it('verifies real deliveries, and a redelivery is acknowledged but not processed twice', async () => {
    const h = await harness();
    const state = { events: [] as VerifiedWebhook[], errors: [] as unknown[] };
    const claims = observedClaims();
    const { url, attach } = await receiver();
    attach({
      secret: (await h.subscribe(url)).secret,
      dedupe: new WebhookDeduplicator({ store: claims.store }),
      onEvent: (webhook) => {
        state.events.push(webhook);
      },
      onError: (error) => state.errors.push(error),
    });

    const [eventId] = await h.finalize(1);
    const delivered = await h.waitForStatus(eventId!, 'succeeded');
    await waitUntil(() => state.events.length === 1);
    const webhook = state.events[0]!;
    assert.equal(webhook.eventId, eventId);
    assert.equal(webhook.deliveryId, delivered.id);
    assert.equal(webhook.event.type, 'recording.transcript_ready');
    assert.equal(webhook.event.api_version, '2026-05-01');
    assert.equal(webhook.event.organization_id, h.org);
    assert.deepEqual(state.errors, []);

    await redeliverEvent(h.services, eventId!);
    await waitUntil(async () => (await h.deliveries(eventId!))[0]?.attempt_count === 2, 'redelivered');
    await h.waitForStatus(eventId!, 'succeeded');
    await claims.until(2);
    assert.deepEqual(claims.decided, [true, false], 'the redelivery was acknowledged, then skipped');
    assert.equal(state.events.length, 1, 'the same event id is processed once');
    assert.deepEqual(state.errors, []);
  });

  it('with a custom header prefix on both sides', async () => {
    const h = await harness({ EDS_WEBHOOK_HEADER_PREFIX: 'Acme-' });
    const state = { events: [] as VerifiedWebhook[] };
    const { url, attach } = await receiver();
    attach({
      secret: (await h.subscribe(url)).secret,
      headerPrefix: 'Acme-',
      onEvent: (webhook) => {
        state.events.push(webhook);
      },
    });
    const [eventId] = await h.finalize(1);
    await h.waitForStatus(eventId!, 'succeeded');
    await waitUntil(() => state.events.length === 1);
    assert.equal(state.events[0]?.eventId, eventId);
  });

  it('a receiver with the wrong secret answers 401 and the worker stops (terminal)', async () => {
    const h = await harness();
    const errors: unknown[] = [];
    const { url, attach } = await receiver();
    await h.subscribe(url);
    attach({
      secret: 'whsec_not_the_right_one',
      onEvent: () => assert.fail('must not run'),
      onError: (e) => errors.push(e),
    });
    const [eventId] = await h.finalize(1);
    const failed = await h.waitForStatus(eventId!, 'failed');
    assert.equal(failed.attempt_count, 1, 'a 401 is not retried');
    assert.ok(errors[0] instanceof WebhookVerificationError);
    assert.equal((errors[0] as WebhookVerificationError).step, 'signature_mismatch');
  });
});

async function waitUntil(check: () => boolean | Promise<boolean>, what = 'condition', timeoutMs = 10_000) {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * The receiver adapters over real sockets: node:http, Express (emulated: express is not
 * installed, so a node:http server reproduces what `express.raw()` and `express.json()` leave on
 * the request), and Fastify (installed in the workspace). Each must verify the raw bytes, answer
 * 204 before the work runs, reject with 4xx naming the failed step, and run the work once per
 * event id.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import Fastify from 'fastify';
import {
  createNodeWebhookHandler,
  expressWebhookHandler,
  readRawBody,
  registerFastifyWebhook,
  signWebhook,
  type VerifiedWebhook,
  WebhookDeduplicator,
  type WebhookHandlerOptions,
} from '../src/webhooks/index.js';
import { observedClaims } from './support/observedClaims.js';

const SECRET = 'whsec_adapter_test';
const EVENT = {
  id: 'evt_adapter_1',
  type: 'recording.transcript_ready' as const,
  api_version: '2026-05-01',
  occurred_at: '2026-05-01T15:00:00.000Z',
  organization_id: 'org_1',
  resources: { encounter_id: 'enc_1', document_id: 'doc_1' },
};
// Whitespace a reserializing parser would not keep: the signature covers these exact bytes.
const RAW = `{ "id": "${EVENT.id}", "type": "recording.transcript_ready", "api_version": "2026-05-01", "occurred_at": "2026-05-01T15:00:00.000Z", "organization_id": "org_1", "resources": { "encounter_id": "enc_1", "document_id": "doc_1" } }\n`;

const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closers) await close();
});

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/eds`;
}

function signed() {
  const { rawBody, headers } = signWebhook({ event: EVENT, rawBody: RAW, secret: SECRET });
  return { body: rawBody as string, headers };
}

function post(url: string, delivery: { body: string; headers: Record<string, string> }) {
  return fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
}

/** Options that record the work and let a test wait for it. */
function recorder() {
  const events: VerifiedWebhook[] = [];
  const errors: unknown[] = [];
  const claims = observedClaims();
  let settle: () => void = () => {};
  let done = new Promise<void>((resolve) => {
    settle = resolve;
  });
  const options: WebhookHandlerOptions = {
    secret: SECRET,
    dedupe: new WebhookDeduplicator({ store: claims.store }),
    onEvent: (webhook) => {
      events.push(webhook);
      settle();
    },
    onError: (error) => errors.push(error),
  };
  return {
    options,
    events,
    errors,
    claims,
    next: async () => {
      await done;
      done = new Promise<void>((resolve) => {
        settle = resolve;
      });
    },
  };
}

/** The shared expectations, run against each adapter's URL. */
async function behavesLikeAReceiver(url: string, rec: ReturnType<typeof recorder>) {
  const ok = await post(url, signed());
  assert.equal(ok.status, 204);
  assert.equal(await ok.text(), '');
  await rec.next();
  assert.equal(rec.events[0]?.eventId, EVENT.id);
  assert.deepEqual(rec.events[0]?.event, EVENT);

  // A redelivery (fresh timestamp, same event id) is acknowledged but the work does not run again.
  const again = await post(url, signed());
  assert.equal(again.status, 204);
  await rec.claims.until(2);
  assert.deepEqual(rec.claims.decided, [true, false]);
  assert.equal(rec.events.length, 1);

  const altered = signed();
  altered.body = altered.body.replace('enc_1', 'enc_2');
  const tampered = await post(url, altered);
  assert.equal(tampered.status, 401);
  assert.deepEqual(await tampered.json(), {
    error: 'webhook_verification_failed',
    step: 'signature_mismatch',
  });

  const missing = signed();
  delete (missing.headers as Record<string, string | undefined>)['Eds-Delivery-Id'];
  const noHeader = await post(url, missing);
  assert.equal(noHeader.status, 400);
  assert.equal(((await noHeader.json()) as { step: string }).step, 'missing_header');

  const stale = signed();
  stale.headers['Eds-Timestamp'] = String(Math.floor(Date.now() / 1000) - 3600);
  const staleAnswer = await post(url, stale);
  assert.equal(staleAnswer.status, 400);
  assert.equal(((await staleAnswer.json()) as { step: string }).step, 'timestamp_out_of_tolerance');

  assert.equal(rec.events.length, 1, 'rejected deliveries never reach the work');
}

/** The 204 must not wait for the work: the service's attempt timeout is 15 s. */
async function answersBeforeWork(start: (options: WebhookHandlerOptions) => Promise<string>) {
  let finished = false;
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const url = await start({
    secret: SECRET,
    // Work that cannot finish until the test lets it: the 204 arriving first shows the answer
    // did not wait for it.
    onEvent: async () => {
      await held;
      finished = true;
    },
  });
  const answer = await post(url, signed());
  assert.equal(answer.status, 204);
  assert.equal(finished, false);
  release();
}

describe('node:http adapter', () => {
  it('verifies the raw bytes, answers 204, then runs the work once per event id', async () => {
    const rec = recorder();
    const url = await listen(createServer(createNodeWebhookHandler(rec.options)));
    await behavesLikeAReceiver(url, rec);
  });

  it('answers 204 before slow work finishes', async () => {
    await answersBeforeWork((options) => listen(createServer(createNodeWebhookHandler(options))));
  });

  it('refuses other methods and oversized bodies', async () => {
    const url = await listen(
      createServer(createNodeWebhookHandler({ secret: SECRET, onEvent: () => {}, maxBodyBytes: 64 })),
    );
    assert.equal((await fetch(url)).status, 405);
    assert.equal((await post(url, signed())).status, 413);
  });

  it('reports failed work to onError and lets a redelivery run it again', async () => {
    let calls = 0;
    const errors: unknown[] = [];
    let reported: () => void = () => {};
    // onError runs after the failed work's claim was released: then a redelivery may run it.
    const failed = new Promise<void>((resolve) => {
      reported = resolve;
    });
    const ran = new Promise<void>((resolve) => {
      const url = listen(
        createServer(
          createNodeWebhookHandler({
            secret: SECRET,
            dedupe: new WebhookDeduplicator(),
            onEvent: () => {
              calls++;
              if (calls === 1) throw new Error('downstream down');
              resolve();
            },
            onError: (error) => {
              errors.push(error);
              reported();
            },
          }),
        ),
      );
      void url.then(async (u) => {
        assert.equal((await post(u, signed())).status, 204);
        await failed;
        assert.equal((await post(u, signed())).status, 204);
      });
    });
    await ran;
    assert.equal(calls, 2);
    assert.match(String(errors[0]), /downstream down/);
  });

  it('readRawBody keeps the bytes exactly', async () => {
    const bytes = Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d, 0x0d, 0x0a]);
    async function* chunks() {
      yield bytes.subarray(0, 2);
      yield bytes.subarray(2);
    }
    assert.deepEqual(await readRawBody(chunks()), bytes);
  });
});

describe('Express adapter (express not installed: body parsers emulated on node:http)', () => {
  /** What express.raw / express.json / nothing leave on `req.body` before the route handler. */
  type Parser = 'raw' | 'json' | 'none';
  async function expressLike(parser: Parser, rec: ReturnType<typeof recorder>): Promise<string> {
    const handler = expressWebhookHandler(rec.options);
    return listen(
      createServer(async (req: IncomingMessage & { body?: unknown }, res) => {
        if (parser === 'raw') req.body = await readRawBody(req);
        if (parser === 'json') req.body = JSON.parse((await readRawBody(req)).toString('utf8'));
        handler(req, res, () => {});
      }),
    );
  }

  it('with express.raw({ type: "application/json" }): verifies, 204, dedupes', async () => {
    const rec = recorder();
    await behavesLikeAReceiver(await expressLike('raw', rec), rec);
  });

  it('with no body parser: reads the stream itself', async () => {
    const rec = recorder();
    await behavesLikeAReceiver(await expressLike('none', rec), rec);
  });

  it('answers 204 before slow work finishes', async () => {
    await answersBeforeWork((options) =>
      listen(createServer((req, res) => expressWebhookHandler(options)(req, res, () => {}))),
    );
  });

  it('after express.json(): answers 500 raw_body_required so the service retries once fixed', async () => {
    const rec = recorder();
    const answer = await post(await expressLike('json', rec), signed());
    assert.equal(answer.status, 500);
    assert.equal(((await answer.json()) as { step: string }).step, 'raw_body_required');
    assert.equal(rec.events.length, 0);
  });
});

async function fastifyApp(options: WebhookHandlerOptions) {
  const app = Fastify();
  registerFastifyWebhook(app, { ...options, url: '/webhooks/eds' });
  // The rest of the app keeps Fastify's JSON parser.
  app.post('/other', async (request) => ({ parsed: request.body }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  closers.push(() => app.close());
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

describe('Fastify adapter', () => {
  it('answers 204 before slow work finishes', async () => {
    await answersBeforeWork(async (options) => `${await fastifyApp(options)}/webhooks/eds`);
  });

  it('keeps the raw buffer in its own scope, verifies, 204, dedupes', async () => {
    const rec = recorder();
    const base = await fastifyApp(rec.options);
    await behavesLikeAReceiver(`${base}/webhooks/eds`, rec);
    const other = await fetch(`${base}/other`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    assert.deepEqual(await other.json(), { parsed: { a: 1 } });
  });
});

import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { classifyStatus, errorClassOf } from '../../src/webhooks/classify.js';
import { isForbiddenAddress } from '../../src/webhooks/egress.js';
import { endpointUrlProblem } from '../../src/webhooks/endpointUrl.js';
import { KeyedLimiter } from '../../src/webhooks/limiter.js';
import { maxAttemptsPerRound, nextRetryDelayMs, parseRetryAfter } from '../../src/webhooks/schedule.js';
import {
  decryptSigningSecret,
  encryptSigningSecret,
  generateSigningSecret,
} from '../../src/webhooks/secrets.js';
import { signatureFor, signedHeaders } from '../../src/webhooks/signer.js';
import { scratchDir } from '../support/scratchDir.js';
import { verifyDelivery } from './support/verifier.js';

describe('result classes (contract, Events)', () => {
  test('2xx succeed; 408, 409, 425, 429 and 5xx retry; 1xx, 3xx and other 4xx are terminal', () => {
    for (const s of [200, 201, 202, 204, 299]) assert.equal(classifyStatus(s), 'success', String(s));
    for (const s of [408, 409, 425, 429, 500, 502, 503, 504, 599])
      assert.equal(classifyStatus(s), 'retryable', String(s));
    for (const s of [
      100, 101, 199, 300, 301, 302, 303, 307, 308, 400, 401, 403, 404, 405, 410, 413, 422, 451,
    ]) {
      assert.equal(classifyStatus(s), 'terminal', String(s));
    }
  });

  test('client errors map to classes without their messages', () => {
    assert.equal(errorClassOf(Object.assign(new Error('x'), { code: 'ECONNREFUSED' })), 'connection_refused');
    assert.equal(errorClassOf(Object.assign(new Error('x'), { code: 'ENOTFOUND' })), 'dns_error');
    assert.equal(errorClassOf(Object.assign(new Error('x'), { code: 'UND_ERR_CONNECT_TIMEOUT' })), 'timeout');
    assert.equal(errorClassOf(Object.assign(new Error('x'), { code: 'CERT_HAS_EXPIRED' })), 'tls_error');
    assert.equal(
      errorClassOf(
        new Error('wrapped', {
          cause: Object.assign(new Error('y'), { code: 'ERR_TLS_CERT_ALTNAME_INVALID' }),
        }),
      ),
      'tls_error',
    );
    assert.equal(errorClassOf(Object.assign(new Error('x'), { code: 'ECONNRESET' })), 'connection_error');
  });
});

describe('retry schedule (decisions.md)', () => {
  const policy = { retryScheduleSeconds: [5, 300, 1800, 7200, 18000, 36000, 36000], jitterRatio: 0.2 };

  test('default schedule: 8 attempts, delays within ±20 %', () => {
    assert.equal(maxAttemptsPerRound(policy), 8);
    for (let attempt = 1; attempt <= 7; attempt++) {
      const base = policy.retryScheduleSeconds[attempt - 1]! * 1000;
      assert.equal(
        nextRetryDelayMs(policy, attempt, undefined, () => 0),
        base * 0.8,
      );
      assert.equal(
        nextRetryDelayMs(policy, attempt, undefined, () => 1),
        base * 1.2,
      );
      assert.equal(
        nextRetryDelayMs(policy, attempt, undefined, () => 0.5),
        base,
      );
    }
    assert.equal(nextRetryDelayMs(policy, 8, undefined), undefined);
  });

  test('Retry-After is honored when longer, up to the next step’s ceiling', () => {
    // After attempt 1 the step is 5 s; the next step is 300 s (ceiling 360 s).
    assert.equal(
      nextRetryDelayMs(policy, 1, 60_000, () => 0.5),
      60_000,
    );
    assert.equal(
      nextRetryDelayMs(policy, 1, 1_000, () => 0.5),
      5_000,
    );
    assert.equal(
      nextRetryDelayMs(policy, 1, 86_400_000, () => 0.5),
      360_000,
    );
    // The last step is its own next step.
    assert.equal(
      nextRetryDelayMs(policy, 7, 86_400_000, () => 0.5),
      43_200_000,
    );
  });

  test('Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-05-01T00:00:00Z');
    assert.equal(parseRetryAfter('120', now), 120_000);
    assert.equal(parseRetryAfter('Fri, 01 May 2026 00:01:00 GMT', now), 60_000);
    assert.equal(parseRetryAfter('soon', now), undefined);
    assert.equal(parseRetryAfter('-5', now), undefined);
    assert.equal(parseRetryAfter(undefined, now), undefined);
  });
});

describe('signing', () => {
  test('v1 = hex HMAC-SHA256 of "<timestamp>.<body>" keyed with the secret’s UTF-8 bytes', () => {
    const secret = 'whsec_example';
    const body = '{"id":"evt_1"}';
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8'))
      .update(`1777600000.${body}`)
      .digest('hex');
    assert.equal(signatureFor(secret, 1777600000, body), `v1=${expected}`);
  });

  test('the five headers with the prefix, whole-second timestamp, verified by a contract receiver', () => {
    const secret = generateSigningSecret();
    const body = JSON.stringify({ id: 'evt_1', api_version: '2026-05-01' });
    const now = Date.now();
    const headers = signedHeaders({
      prefix: 'Eds-',
      secret,
      eventId: 'evt_1',
      deliveryId: 'dlv_1',
      apiVersion: '2026-05-01',
      body,
      now,
    });
    assert.deepEqual(Object.keys(headers).sort(), [
      'Eds-Delivery-Id',
      'Eds-Event-Id',
      'Eds-Signature',
      'Eds-Timestamp',
      'Eds-Webhook-Version',
      'content-type',
    ]);
    assert.equal(headers['Eds-Timestamp'], String(Math.floor(now / 1000)));
    const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
    const result = verifyDelivery(Buffer.from(body), lower, secret);
    assert.equal(result.ok, true);
  });
});

describe('signing secrets at rest', () => {
  test('whsec_ plus base62, encrypted (not stored in the clear) and bound to the subscription', () => {
    const secret = generateSigningSecret();
    assert.match(secret, /^whsec_[0-9A-Za-z]{43}$/);
    const stored = encryptSigningSecret(secret, 'whe_a', 'root-secret');
    assert.ok(!stored.includes(secret.slice(6)));
    assert.notEqual(stored, encryptSigningSecret(secret, 'whe_a', 'root-secret'), 'fresh IV each time');
    assert.equal(decryptSigningSecret(stored, 'whe_a', 'root-secret'), secret);
    assert.throws(() => decryptSigningSecret(stored, 'whe_b', 'root-secret'));
    assert.throws(() => decryptSigningSecret(stored, 'whe_a', 'other-root'));
  });
});

describe('egress policy', () => {
  test('loopback, private, link-local, shared and unique-local are refused unless allowed', () => {
    for (const ip of [
      '127.0.0.1',
      '127.1.2.3',
      '10.0.0.5',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.10.10',
      '100.64.0.1',
      '::1',
      'fe80::1',
      'fc00::1',
      'fd12:3456::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '64:ff9b::a00:1',
      '2002:a00:1::',
    ]) {
      assert.equal(isForbiddenAddress(ip, false), true, ip);
      assert.equal(isForbiddenAddress(ip, true), false, `${ip} allowed with private networks`);
    }
  });

  test('metadata, unspecified and multicast are refused always; public addresses pass', () => {
    for (const ip of [
      '169.254.169.254',
      '0.0.0.0',
      '::',
      'fd00:ec2::254',
      '224.0.0.1',
      'ff02::1',
      '::ffff:169.254.169.254',
    ]) {
      assert.equal(isForbiddenAddress(ip, true), true, ip);
    }
    for (const ip of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '64:ff9b::808:808']) {
      assert.equal(isForbiddenAddress(ip, false), false, ip);
    }
    assert.equal(isForbiddenAddress('not-an-ip', true), true);
  });

  test('endpoint URLs: https unless http is allowed, no credentials, no fragment', () => {
    assert.equal(endpointUrlProblem('https://hooks.example.test/x', { allowHttp: false }), undefined);
    assert.equal(
      endpointUrlProblem('http://hooks.example.test/x', { allowHttp: false })?.problem,
      'insecure_url',
    );
    assert.equal(endpointUrlProblem('http://hooks.example.test/x', { allowHttp: true }), undefined);
    assert.equal(
      endpointUrlProblem('https://u:p@hooks.example.test/', { allowHttp: true })?.problem,
      'invalid_url',
    );
    assert.equal(
      endpointUrlProblem('ftp://hooks.example.test/', { allowHttp: true })?.problem,
      'invalid_url',
    );
    assert.equal(
      endpointUrlProblem('https://hooks.example.test/#x', { allowHttp: true })?.problem,
      'invalid_url',
    );
    assert.equal(endpointUrlProblem('/relative', { allowHttp: true })?.problem, 'invalid_url');
  });
});

describe('per-endpoint limiter', () => {
  test('at most `limit` holders per key, waiters in order, abort leaves the queue', async () => {
    const limiter = new KeyedLimiter(2);
    assert.equal(await limiter.acquire('a'), true);
    assert.equal(await limiter.acquire('a'), true);
    assert.equal(await limiter.acquire('b'), true);
    const order: number[] = [];
    const third = limiter.acquire('a').then((ok) => order.push(3) && ok);
    const abort = new AbortController();
    const aborted = limiter.acquire('a', abort.signal);
    const fifth = limiter.acquire('a').then((ok) => order.push(5) && ok);
    abort.abort();
    assert.equal(await aborted, false);
    limiter.release('a');
    limiter.release('a');
    assert.equal(await third, true);
    assert.equal(await fifth, true);
    assert.deepEqual(order, [3, 5]);
  });
});

describe('webhook settings', () => {
  const base = { EDS_KEY_DIGEST_SECRET: 'k'.repeat(32), EDS_MEDIA_SIGNING_SECRET: 'm'.repeat(32) };

  test('the proxy URL may come from a file (credentials stay out of the environment); the pause takes units', () => {
    const dir = scratchDir('proxy-');
    const file = join(dir, 'proxy-url');
    writeFileSync(file, 'http://egress:s3cret@10.0.0.8:3128\n');
    const config = loadConfig(
      { ...base, EDS_WEBHOOK_PROXY_URL_FILE: file, EDS_WEBHOOK_PAUSE_AFTER: '3d' },
      dir,
    );
    assert.equal(config.webhooks.proxyUrl, 'http://egress:s3cret@10.0.0.8:3128');
    assert.equal(config.webhooks.pauseAfterMs, 3 * 86_400_000);
    assert.equal(loadConfig(base, dir).webhooks.pauseAfterMs, 72 * 3_600_000);
  });

  test('a proxy URL that is not http://host:port is refused without echoing it', () => {
    const dir = scratchDir('proxy-');
    for (const bad of ['socks5://egress:s3cret@10.0.0.8:1080', 'http://egress:s3cret@10.0.0.8:3128/path']) {
      assert.throws(
        () => loadConfig({ ...base, EDS_WEBHOOK_PROXY_URL: bad }, dir),
        (error: Error) =>
          /EDS_WEBHOOK_PROXY_URL must be/.test(error.message) && !error.message.includes('s3cret'),
      );
    }
    assert.throws(
      () => loadConfig({ ...base, EDS_WEBHOOK_PAUSE_AFTER: '72 hours' }, dir),
      /EDS_WEBHOOK_PAUSE_AFTER/,
    );
  });
});

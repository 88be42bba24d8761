/**
 * A refusal is held until its request could have succeeded (the time to the bucket's next
 * token, and one interval more for each refusal of the bucket held ahead of it), at most
 * EDS_RATE_LIMIT_HOLD_MS, and its Retry-After is what is left of the wait when it is sent. The
 * holds are recorded by an injected sleep: the arithmetic is checked exactly, with no timing
 * involved.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import type { RateLimitConfig } from '../../src/config.js';
import { ApiError } from '../../src/domain/errors.js';
import { createMetrics } from '../../src/metrics.js';
import { Buckets } from '../../src/rateLimit/buckets.js';
import { rateLimitFields } from '../../src/rateLimit/fields.js';
import { RequestLimits } from '../../src/rateLimit/requestLimits.js';

function limitsWith(holdRefusalMaxMs: number, sleep?: (ms: number) => Promise<void>) {
  const config: RateLimitConfig = {
    perKey: 2,
    burst: 3,
    unauthenticated: 1,
    redisUrl: undefined,
    redisCommandTimeoutMs: 250,
    holdRefusalMaxMs,
  };
  const metrics = createMetrics();
  const holds: number[] = [];
  const limits = new RequestLimits(
    config,
    new Buckets(config, pino({ level: 'silent' }), metrics),
    metrics,
    async (ms) => {
      holds.push(ms);
      await sleep?.(ms);
    },
  );
  const charge = async (now: number) =>
    limits.chargeKey('key_a', { rateLimitPerKey: null }, now, rateLimitFields);
  return { limits, holds, charge };
}

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => assert.fail('expected a 429'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof ApiError);
  assert.equal(error.reasonCode, 'rate_limited');
  return error;
}

test('a key refused is held until its next token, at most the bound, and told what is left', async () => {
  const { holds, charge } = limitsWith(300);
  for (let i = 0; i < 3; i++) await charge(0); // the burst
  assert.deepEqual(holds, [], 'allowed requests are never held');

  // Two a second: the next token comes at 500 ms. Held 300 (the bound), 200 ms left: 1 s.
  const first = await refusal(charge(0));
  assert.equal(first.headers['Retry-After'], '1');
  // At 400 ms the next token is 100 ms away: held exactly that.
  await refusal(charge(400));
  assert.deepEqual(holds, [300, 100]);
});

test('0 sends refusals at once', async () => {
  const { holds, charge } = limitsWith(0);
  for (let i = 0; i < 3; i++) await charge(0);
  const error = await refusal(charge(0));
  assert.equal(error.headers['Retry-After'], '1');
  assert.deepEqual(holds, []);
});

test('an address over its budget is held before its token is looked up', async () => {
  const { limits, holds } = limitsWith(5000);
  // One a second, burst 2.
  await limits.chargeAddress('192.0.2.1', 0);
  await limits.chargeAddress('192.0.2.1', 0);
  const third = limits.chargeAddress('192.0.2.1', 0);
  assert.ok(third, 'the third request is over the burst');
  await refusal(third);
  assert.equal(limits.refuseBlockedAddress('192.0.2.9', 0), undefined, 'another address is not blocked');
  const blocked = limits.refuseBlockedAddress('192.0.2.1', 250);
  assert.ok(blocked, 'the address is known to be over budget');
  await refusal(blocked);
  assert.deepEqual(holds, [1000, 750]);
});

test('refusals held at once queue for the coming tokens: each one interval behind the one before', async () => {
  const release: (() => void)[] = [];
  const { holds, charge } = limitsWith(1200, () => new Promise<void>((resolve) => release.push(resolve)));
  for (let i = 0; i < 3; i++) await charge(0);
  // Two a second (500 ms apart), the next token at 500 ms: four clients refused together wait
  // 500, 1000, 1500 (held 1200, the bound) and 2000 ms (held 1200).
  const refused = Array.from({ length: 4 }, () => refusal(charge(0)));
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(holds, [500, 1000, 1200, 1200]);
  for (const done of release) done();
  const errors = await Promise.all(refused);
  assert.deepEqual(
    errors.map((e) => e.headers['Retry-After']),
    ['1', '1', '1', '1'],
    'what is left after the hold: 0, 0, 300 and 800 ms, at least 1 s',
  );
  // Once they are sent nobody is held: the next refusal is first in line again.
  const last = refusal(charge(0));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(holds.at(-1), 500);
  release.at(-1)!();
  await last;
});

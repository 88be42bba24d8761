/**
 * The bucket arithmetic at the clock's real magnitude: epoch milliseconds (about 1.8e12) leave a
 * double about 2⁻¹² ms of precision, so an expression that adds the interval to the clock before
 * subtracting it rounds, and a bucket of one token could find its first request a hair over
 * capacity — and refuse it forever. Every rate a deployment might choose gets exactly its burst.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemoryBuckets } from '../../src/rateLimit/memoryBuckets.js';
import { intervalMs, takeToken } from '../../src/rateLimit/tokenBucket.js';

/** Instants around today's clock, with fractions (the service's clock may return them). */
const NOWS = Array.from({ length: 200 }, (_, i) => 1_795_000_000_000 + i * 37.37);

test('a full bucket allows exactly its burst at once, at every rate from 1 to 120 a second', () => {
  for (let rate = 1; rate <= 120; rate++) {
    for (const burst of [1, 2, 3, 7]) {
      const policy = { rate, burst };
      for (const now of NOWS) {
        let tat: number | undefined;
        for (let i = 0; i < burst; i++) {
          const taken = takeToken(tat, policy, now);
          assert.equal(taken.decision.allowed, true, `rate ${rate}, burst ${burst}, take ${i + 1} at ${now}`);
          assert.equal(taken.decision.remaining, burst - i - 1, `rate ${rate}, burst ${burst}, remaining`);
          tat = taken.tat;
        }
        const over = takeToken(tat, policy, now);
        assert.equal(over.decision.allowed, false, `rate ${rate}, burst ${burst}: one past the burst`);
      }
    }
  }
});

test('a bucket of one token is refused until one interval has passed, then allowed again', () => {
  for (const rate of [6, 7, 11, 13, 60]) {
    const buckets = new MemoryBuckets();
    const policy = { rate, burst: 1 };
    // The interval sits on the arithmetic's grid of 2⁻¹⁰ ms: within half a step of 1000 / rate.
    const interval = intervalMs(policy);
    assert.ok(Math.abs(interval - 1000 / rate) <= 1 / 2048, `rate ${rate}: interval ${interval}`);
    for (const now of NOWS.slice(0, 20)) {
      const start = now;
      assert.equal(buckets.take(`b${now}`, policy, start).allowed, true, `rate ${rate}: the first request`);
      const refused = buckets.take(`b${now}`, policy, start + interval / 2);
      assert.equal(refused.allowed, false, `rate ${rate}: half an interval later`);
      assert.ok(Math.abs(refused.retryAfterMs - interval / 2) <= 1 / 1024, `rate ${rate}: Retry-After in ms`);
      assert.equal(
        buckets.take(`b${now}`, policy, start + interval).allowed,
        true,
        `rate ${rate}: an interval later`,
      );
    }
  }
});

/**
 * The Redis buckets against a real redis-server: the takes of one turn of the event loop are
 * decided by one script call, with exactly the decisions the in-process buckets give for the
 * same takes in the same order (repeated buckets, mixed policies, several turns, turns larger
 * than one call takes), and a failed call fails every take that was waiting on it, so each
 * request can fall back to limiting alone.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { MemoryBuckets } from '../../src/rateLimit/memoryBuckets.js';
import { RedisBuckets } from '../../src/rateLimit/redisBuckets.js';
import { type BucketDecision, type BucketPolicy, takeToken } from '../../src/rateLimit/tokenBucket.js';
import { REDIS_SERVER_MISSING, startTestRedis, type TestRedis } from '../support/redis.js';

let redis: TestRedis;
let buckets: RedisBuckets;
/** A plain client (no key prefix) to look at what the buckets stored. */
let inspect: Redis;

describe('RedisBuckets on a private redis-server', { skip: REDIS_SERVER_MISSING }, () => {
  before(async () => {
    redis = await startTestRedis();
    buckets = new RedisBuckets(redis.url);
    inspect = new Redis(redis.url);
    while (!buckets.ready) await new Promise((r) => setTimeout(r, 10));
  });
  after(async () => {
    inspect.disconnect();
    await buckets.close();
    await redis.stop();
  });

  /** Script calls Redis has run so far (EVAL and EVALSHA). */
  async function scriptCalls(): Promise<number> {
    const stats = await inspect.info('commandstats');
    let calls = 0;
    for (const match of stats.matchAll(/^cmdstat_eval(?:sha)?:calls=(\d+)/gm)) calls += Number(match[1]);
    return calls;
  }

  interface Take {
    bucket: string;
    policy: BucketPolicy;
    now: number;
  }

  function assertSameDecision(actual: BucketDecision, expected: BucketDecision, what: string): void {
    // Numbers cross the Lua boundary with 17 significant digits: exactly the same doubles.
    assert.deepEqual(actual, expected, what);
  }

  /**
   * Sends `takes` in one turn of the event loop and asserts that it became `calls` script calls
   * (`callsMessage`) and that each take was decided as `memory`, the in-process buckets given the
   * same takes, decides it (`label` names the take). Returns Redis's decisions.
   */
  async function decidedAsInProcess(
    takes: readonly Take[],
    memory: MemoryBuckets,
    calls: number,
    callsMessage: string,
    label: (i: number) => string,
  ): Promise<BucketDecision[]> {
    const callsBefore = await scriptCalls();
    const decisions = await Promise.all(takes.map((t) => buckets.take(t.bucket, t.policy, t.now)));
    assert.equal((await scriptCalls()) - callsBefore, calls, callsMessage);
    takes.forEach((t, i) => {
      assertSameDecision(decisions[i] as BucketDecision, memory.take(t.bucket, t.policy, t.now), label(i));
    });
    return decisions;
  }

  test('the takes of one turn are one script call, decided as the in-process buckets decide them', async () => {
    const policies: BucketPolicy[] = [
      { rate: 3, burst: 5 },
      { rate: 50, burst: 100 },
      { rate: 1, burst: 1 },
    ];
    const memory = new MemoryBuckets();
    // Deterministic "random" mix: three buckets (one much hotter), each with its own policy.
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    let now = 1_800_000_000_000;
    let allowedSeen = 0;
    let refusedSeen = 0;
    for (let turn = 0; turn < 5; turn++) {
      const takes: Take[] = [];
      for (let i = 0; i < 40; i++) {
        const which = next() < 0.6 ? 0 : next() < 0.5 ? 1 : 2;
        takes.push({ bucket: `batch:${which}`, policy: policies[which] as BucketPolicy, now });
        now += Math.floor(next() * 40);
      }
      const decisions = await decidedAsInProcess(
        takes,
        memory,
        1,
        `turn ${turn}: one script call for 40 takes`,
        (i) => `turn ${turn}, take ${i} (${takes[i]?.bucket})`,
      );
      for (const decision of decisions) {
        if (decision.allowed) allowedSeen++;
        else refusedSeen++;
      }
      now += 700;
    }
    assert.ok(allowedSeen > 20 && refusedSeen > 20, 'the mix both allows and refuses');
    assert.deepEqual((await inspect.keys('*')).sort(), [
      'eds:rl:batch:0',
      'eds:rl:batch:1',
      'eds:rl:batch:2',
    ]);
  });

  test('a bucket whose policy changes within a turn is decided in arrival order under each take’s policy', async () => {
    // An organization's rate updated while its requests are in flight: one bucket, two policies
    // interleaved in one call, with fractional times (the stored TAT must keep them exactly).
    // The third differs from the first only in its burst.
    const policies: BucketPolicy[] = [
      { rate: 2, burst: 3 },
      { rate: 7, burst: 2 },
      { rate: 2, burst: 1 },
    ];
    const memory = new MemoryBuckets();
    let now = 2_300_000_000_000.25;
    for (let turn = 0; turn < 3; turn++) {
      const takes: Take[] = [0, 2, 1, 1, 0, 2, 0, 0, 1, 2].map((which, i) => ({
        bucket: 'changing',
        policy: policies[which] as BucketPolicy,
        now: now + i * 37.125,
      }));
      const decisions = await decidedAsInProcess(
        takes,
        memory,
        1,
        `turn ${turn}: one script call`,
        (i) => `turn ${turn}, take ${i}`,
      );
      assert.ok(
        decisions.some((d) => d.allowed) && decisions.some((d) => !d.allowed),
        `turn ${turn} both allows and refuses`,
      );
      now += 450.5;
    }
  });

  test('a turn larger than one call takes is split into calls of at most 512, decided alike', async () => {
    const memory = new MemoryBuckets();
    // Tight enough that every bucket runs dry within the turn: refusals on both sides of a split.
    const policy = { rate: 100, burst: 20 };
    const takes = Array.from({ length: 1100 }, (_, i) => ({
      bucket: `split:${i % 7}`,
      policy,
      now: 2_000_000_000_000 + i,
    }));
    const decisions = await decidedAsInProcess(takes, memory, 3, '512 + 512 + 76', (i) => `take ${i}`);
    for (const [from, to] of [
      [0, 512],
      [512, 1024],
      [1024, 1100],
    ] as const) {
      const call = decisions.slice(from, to);
      assert.ok(call.some((d) => d.allowed) && call.some((d) => !d.allowed), `takes ${from}-${to}`);
    }
  });

  test('a key that is not a bucket counts as a full bucket and fails no other request of its call', async () => {
    await inspect.hset('eds:rl:foreign', 'field', '1');
    await inspect.set('eds:rl:garbage', 'not a number');
    await inspect.set('eds:rl:infinite', 'inf');
    await inspect.set('eds:rl:nan', 'nan');
    const policy = { rate: 2, burst: 3 };
    const now = 2_100_000_000_000;
    const decisions = await Promise.all(
      ['foreign', 'garbage', 'infinite', 'nan', 'fresh'].map((bucket) => buckets.take(bucket, policy, now)),
    );
    const full = new MemoryBuckets().take('any', policy, now);
    for (const decision of decisions) assertSameDecision(decision, full, 'as a full bucket');
  });

  test('a bucket is stored with its TAT and expires a minute after it would be full again', async () => {
    const now = 1_900_000_000_000;
    // 50 tokens of a second each in one turn: full again 50 s after now, after the last take.
    const decisions = await Promise.all(
      Array.from({ length: 50 }, () => buckets.take('expiry', { rate: 1, burst: 100 }, now)),
    );
    assert.ok(decisions.every((d) => d.allowed));
    assert.equal(await inspect.get('eds:rl:expiry'), String(now + 50_000));
    // Kept 60 s past that (110 s); the lower bound leaves room for a slow run.
    const ttl = await inspect.pttl('eds:rl:expiry');
    assert.ok(ttl > 100_000 && ttl <= 110_000, `PTTL ${ttl}`);
  });

  test('a TAT stored off the arithmetic’s grid (an earlier release) is decided as in-process', async () => {
    const now = 2_400_000_000_000;
    const policy = { rate: 7, burst: 3 };
    // 1000 / 7 added to the clock, as the earlier release stored it: not a multiple of 2⁻¹⁰ ms.
    const stored = now + 2 * (1000 / 7);
    await inspect.set('eds:rl:earlier', String(stored));
    const times = [now, now, now + 0.5, now + 200];
    const decisions = await Promise.all(times.map((at) => buckets.take('earlier', policy, at)));
    let tat: number | undefined = stored;
    times.forEach((at, i) => {
      const expected = takeToken(tat, policy, at);
      tat = expected.tat;
      assertSameDecision(decisions[i] as BucketDecision, expected.decision, `take ${i}`);
    });
    assert.ok(decisions.some((d) => d.allowed) && decisions.some((d) => !d.allowed));
    assert.equal(Number(await inspect.get('eds:rl:earlier')), tat);
  });

  test('a failed call fails every take waiting on it (each request then decides alone)', async () => {
    const slow = new RedisBuckets(redis.url, { commandTimeoutMs: 50 });
    try {
      while (!slow.ready) await new Promise((r) => setTimeout(r, 10));
      const held = await redis.pause(1000);
      const settled = Promise.allSettled(
        [1, 2, 3].map((n) => slow.take(`fail:${n}`, { rate: 1, burst: 1 }, 0)),
      );
      // A take that never settled would hang the request behind it: fail here instead.
      const results = await Promise.race([
        settled,
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error('a take never settled')), 10_000),
        ),
      ]);
      assert.deepEqual(
        results.map((r) => r.status),
        ['rejected', 'rejected', 'rejected'],
      );
      await held.resumed;
    } finally {
      await slow.close();
    }
  });

  test('takes of the turn in which the buckets close are still answered', async () => {
    const closing = new RedisBuckets(redis.url);
    while (!closing.ready) await new Promise((r) => setTimeout(r, 10));
    const decision = closing.take('closing', { rate: 1, burst: 1 }, 2_200_000_000_000);
    await closing.close();
    assert.equal((await decision).allowed, true);
  });
});

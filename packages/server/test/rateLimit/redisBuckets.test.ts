/**
 * The Redis buckets against a real redis-server: the takes of one turn of the event loop are
 * decided by one script call, with exactly the decisions the in-process buckets give for the
 * same takes in the same order (repeated buckets, mixed policies, several turns), and a failed
 * call fails every take that was waiting on it, so each request can fall back to limiting alone.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { MemoryBuckets } from '../../src/rateLimit/memoryBuckets.js';
import { RedisBuckets } from '../../src/rateLimit/redisBuckets.js';
import type { BucketDecision, BucketPolicy } from '../../src/rateLimit/tokenBucket.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';

let redis: TestRedis;
let buckets: RedisBuckets;

before(async () => {
  redis = await startTestRedis();
  buckets = new RedisBuckets(redis.url);
  while (!buckets.ready) await new Promise((r) => setTimeout(r, 10));
});
after(async () => {
  await buckets.close();
  await redis.stop();
});

/** One command on a fresh connection, its reply as text. */
function command(line: string): Promise<string> {
  const port = Number(new URL(redis.url).port);
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`${line}\r\n`));
    let reply = '';
    socket.on('data', (data) => {
      reply += data.toString();
      // A bulk reply: its length line, then that many bytes and CRLF.
      const match = /^\$(\d+)\r\n/.exec(reply);
      if (match && reply.length >= match[0].length + Number(match[1]) + 2) {
        socket.destroy();
        resolve(reply.slice(match[0].length, match[0].length + Number(match[1])));
      }
    });
    socket.once('error', reject);
  });
}

/** Script calls Redis has run so far (EVAL and EVALSHA). */
async function scriptCalls(): Promise<number> {
  const stats = await command('INFO commandstats');
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
  assert.equal(actual.allowed, expected.allowed, what);
  assert.equal(actual.remaining, expected.remaining, what);
  // Lua prints numbers with 14 significant digits.
  assert.ok(Math.abs(actual.fullInMs - expected.fullInMs) < 1e-6, `${what}: fullInMs`);
  assert.ok(Math.abs(actual.retryAfterMs - expected.retryAfterMs) < 1e-6, `${what}: retryAfterMs`);
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
    const callsBefore = await scriptCalls();
    const decisions = await Promise.all(takes.map((t) => buckets.take(t.bucket, t.policy, t.now)));
    assert.equal((await scriptCalls()) - callsBefore, 1, `turn ${turn}: one script call for 40 takes`);
    takes.forEach((t, i) => {
      const expected = memory.take(t.bucket, t.policy, t.now);
      assertSameDecision(decisions[i] as BucketDecision, expected, `turn ${turn}, take ${i} (${t.bucket})`);
      if (expected.allowed) allowedSeen++;
      else refusedSeen++;
    });
    now += 700;
  }
  assert.ok(allowedSeen > 20 && refusedSeen > 20, 'the mix both allows and refuses');
});

test('a bucket is stored with its TAT and expires a minute after it would be full again', async () => {
  const now = 1_900_000_000_000;
  const decision = await buckets.take('expiry', { rate: 10, burst: 20 }, now);
  assert.equal(decision.allowed, true);
  assert.equal(await command('GET eds:rl:expiry'), String(now + 100));
  const ttl = Number(await command('EVAL "return tostring(redis.call(\'PTTL\', KEYS[1]))" 1 eds:rl:expiry'));
  assert.ok(ttl > 59_000 && ttl <= 60_100, `PTTL ${ttl}`);
});

test('a failed call fails every take waiting on it (each request then decides alone)', async () => {
  const slow = new RedisBuckets(redis.url, { commandTimeoutMs: 50 });
  try {
    while (!slow.ready) await new Promise((r) => setTimeout(r, 10));
    const held = await redis.pause(1000);
    const results = await Promise.allSettled(
      [1, 2, 3].map((n) => slow.take(`fail:${n}`, { rate: 1, burst: 1 }, 0)),
    );
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected', 'rejected'],
    );
    await held.resumed;
  } finally {
    await slow.close();
  }
});

/**
 * Rate-limit buckets shared through a real Redis by two API servers, and what happens when that
 * Redis is killed mid-run and comes back: each process limits alone, logs once, counts it, and
 * never answers 5xx; once Redis answers again the buckets are shared again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testClock } from '../support/clock.js';
import { histogramCountAndSum } from '../support/metrics.js';
import { REDIS_SERVER_MISSING, startTestRedis, type TestRedis } from '../support/redis.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { buildWorld, type World } from '../support/world.js';

const path = '/external/v1/encounters';
let redis: TestRedis;
let a: TestServer;
let b: TestServer;
let world: World;
const clock = testClock();

describe('two API processes on a private redis-server', { skip: REDIS_SERVER_MISSING }, () => {
  before(async () => {
    redis = await startTestRedis();
    const env = {
      EDS_RATE_LIMIT_PER_KEY: '2',
      EDS_RATE_LIMIT_BURST: '3',
      EDS_REDIS_URL: redis.url,
    };
    a = await startTestServer('sqlite', { env, clock: clock.now });
    b = await startTestServer('sqlite', { env, clock: clock.now, database: a.database });
    world = await buildWorld(a.fixtures, a.putObject);
    for (const server of [a, b]) await until(() => redisUp(server));
  });
  after(async () => {
    await b.close();
    await a.close();
    await redis.stop();
  });

  async function redisUp(server: TestServer): Promise<boolean> {
    const gauge = await server.services.metrics.rateLimitRedisUp.get();
    return gauge.values[0]?.value === 1;
  }

  async function localDecisions(server: TestServer): Promise<number> {
    return (await server.services.metrics.rateLimitLocalDecisions.get()).values[0]?.value ?? 0;
  }

  async function until(condition: () => Promise<boolean>): Promise<void> {
    while (!(await condition())) await new Promise((r) => setTimeout(r, 20));
  }

  async function statuses(server: TestServer, token: string, count: number): Promise<number[]> {
    const seen: number[] = [];
    for (let i = 0; i < count; i++) seen.push((await server.api.get(path, { token })).status);
    return seen;
  }

  async function assertSharedBucket(a: TestServer, b: TestServer): Promise<void> {
    const { token } = await a.fixtures.key(world.orgA);
    assert.deepEqual(await statuses(a, token, 2), [200, 200]);
    assert.deepEqual(await statuses(b, token, 1), [200]);
    assert.deepEqual(await statuses(b, token, 1), [429], 'the burst of 3 was spent across both servers');
    assert.deepEqual(await statuses(a, token, 1), [429]);
  }

  /** Script calls a server has had answered by Redis, from its call-time histogram. */
  async function redisCalls(server: TestServer): Promise<number> {
    return (await histogramCountAndSum(server.services.metrics.rateLimitRedisCallDuration)).count ?? 0;
  }

  test('two servers share a key’s bucket through Redis', async () => {
    const before = [await redisCalls(a), await redisCalls(b)];
    await assertSharedBucket(a, b);
    // One request at a time: each is its own turn of the event loop, so its own timed call.
    assert.deepEqual(
      [(await redisCalls(a)) - before[0]!, (await redisCalls(b)) - before[1]!],
      [3, 2],
      'every call to Redis is timed in eds_rate_limit_redis_call_seconds',
    );
  });

  test('concurrent requests on two servers take exactly the burst from the shared bucket', async () => {
    const { token } = await a.fixtures.key(world.orgA);
    // Ten requests at once, five on each server: however Redis receives them (one call per turn of
    // each server's event loop, several turns or one), the bucket of 3 gives exactly 3 tokens.
    const seen = await Promise.all(
      [a, b, a, b, a, b, a, b, a, b].map(async (server) => (await server.api.get(path, { token })).status),
    );
    assert.deepEqual(
      [...seen].sort(),
      [200, 200, 200, 429, 429, 429, 429, 429, 429, 429],
      `statuses: ${seen.join(', ')}`,
    );
  });

  test('servers on the deployment’s Redis (TEST_REDIS_URL) share buckets too', {
    skip: process.env.TEST_REDIS_URL ? false : 'TEST_REDIS_URL is not set',
  }, async () => {
    const env = {
      EDS_RATE_LIMIT_PER_KEY: '2',
      EDS_RATE_LIMIT_BURST: '3',
      EDS_REDIS_URL: process.env.TEST_REDIS_URL ?? '',
    };
    const c = await startTestServer('sqlite', { env, clock: clock.now, database: a.database });
    const d = await startTestServer('sqlite', { env, clock: clock.now, database: a.database });
    try {
      for (const server of [c, d]) await until(() => redisUp(server));
      await assertSharedBucket(c, d);
    } finally {
      await d.close();
      await c.close();
    }
  });

  test('Redis killed mid-run: each server limits alone, logs once, counts it, never answers 5xx; shared again once back', async () => {
    await redis.stop();
    const { token } = await a.fixtures.key(world.orgA);
    // Each process now has its own bucket of 3 for this key.
    assert.deepEqual(await statuses(a, token, 4), [200, 200, 200, 429]);
    assert.deepEqual(await statuses(b, token, 4), [200, 200, 200, 429]);
    assert.ok((await localDecisions(a)) >= 4);
    assert.ok((await localDecisions(b)) >= 4);
    assert.equal(await redisUp(a), false);
    for (const server of [a, b]) {
      const warnings = server.logs.filter((line) => line.includes('rate-limit store (Redis) unreachable'));
      assert.equal(warnings.length, 1, 'one warning per outage, not one per request');
    }

    await redis.start();
    for (const server of [a, b]) await until(() => redisUp(server));
    assert.ok(a.logs.some((line) => line.includes('reachable again')));
    await assertSharedBucket(a, b);
  });

  test('Redis slower than the command timeout: limited alone meanwhile, shared again once it answers, with no reconnect', async () => {
    const ownClock = testClock();
    const env = {
      EDS_RATE_LIMIT_PER_KEY: '2',
      EDS_RATE_LIMIT_BURST: '3',
      EDS_REDIS_URL: redis.url,
      EDS_REDIS_COMMAND_TIMEOUT_MS: '100',
    };
    const server = await startTestServer('sqlite', { env, clock: ownClock.now, database: a.database });
    try {
      await until(() => redisUp(server));
      const { token } = await server.fixtures.key(world.orgA);
      // Redis holds commands for 2 s, far past the 100 ms timeout: the answer comes from the
      // local bucket.
      const { resumed } = await redis.pause(2000);
      assert.deepEqual(await statuses(server, token, 1), [200]);
      assert.equal(await redisUp(server), false);
      assert.ok((await localDecisions(server)) >= 1);
      assert.equal(await resumed, true);
      // Past the pause after a failure, the next request asks Redis again and finds it answering.
      ownClock.advance(5000);
      assert.deepEqual(await statuses(server, token, 1), [200]);
      assert.equal(await redisUp(server), true);
      assert.ok(server.logs.some((line) => line.includes('reachable again')));
    } finally {
      await server.close();
    }
  });

  test('Redis unreachable from the start: the server starts, limits alone, warns once', async () => {
    const { freePort } = await import('../support/processes.js');
    const env = {
      EDS_RATE_LIMIT_PER_KEY: '2',
      EDS_RATE_LIMIT_BURST: '3',
      EDS_REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
    };
    const server = await startTestServer('sqlite', { env, clock: clock.now, database: a.database });
    try {
      const { token } = await server.fixtures.key(world.orgA);
      assert.deepEqual(await statuses(server, token, 4), [200, 200, 200, 429]);
      assert.ok((await localDecisions(server)) >= 4);
      await until(async () =>
        server.logs.some((line) => line.includes('rate-limit store (Redis) unreachable')),
      );
      assert.equal(await redisUp(server), false);
      const warnings = server.logs.filter((line) => line.includes('rate-limit store (Redis) unreachable'));
      assert.equal(warnings.length, 1);
    } finally {
      await server.close();
    }
  });
});

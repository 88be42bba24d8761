/**
 * Rate limits (decisions.md, Rate limits): per-key token buckets with the organization's own
 * rate, the per-address budget for requests that identify no key, the RateLimit fields, 429
 * rate_limited with Retry-After, and their place in the check order. Time is a test clock:
 * buckets refill only when the test moves it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateToken } from '../../src/auth/token.js';
import { updateOrganizationSettings } from '../../src/store/organizations.js';
import type { ApiResponse } from '../support/apiClient.js';
import { testClock } from '../support/clock.js';
import { startTestServer } from '../support/server.js';
import { useServerWithWorld } from '../support/serverWithWorld.js';
import { forEachStore } from '../support/stores.js';
import { waitFor } from '../support/waitFor.js';
import { buildWorld } from '../support/world.js';

const LIMITS = {
  EDS_RATE_LIMIT_PER_KEY: '2',
  EDS_RATE_LIMIT_BURST: '3',
  EDS_RATE_LIMIT_UNAUTHENTICATED: '1',
  // One flush window for the whole suite: folded audit rows are counted per window.
  EDS_AUDIT_FLUSH_MS: '600000',
};

forEachStore('rate limits', (kind) => {
  const clock = testClock();
  const given = useServerWithWorld(kind, { env: LIMITS, clock: clock.now });

  const list = '/external/v1/encounters';

  test('a key gets its burst, then 429 rate_limited with Retry-After and the RateLimit fields', async () => {
    const { token } = await given.server.fixtures.key(given.world.orgA);
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await given.server.api.get(list, { token });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.headers.get('ratelimit-policy'), '"key";q=3;w=2');
      remaining.push(r.headers.get('ratelimit') ?? '');
    }
    assert.deepEqual(
      remaining.map((f) => /r=(\d+)/.exec(f)?.[1]),
      ['2', '1', '0'],
    );
    const refused = await given.server.api.get(list, { token });
    assert.equal(refused.status, 429);
    assert.equal(refused.body.reason_code, 'rate_limited');
    assert.equal(refused.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    assert.equal(refused.headers.get('retry-after'), '1');
    assert.equal(refused.headers.get('ratelimit-policy'), '"key";q=3;w=2');
    assert.match(refused.headers.get('ratelimit') ?? '', /^"key";r=0;t=\d+$/);
    assert.equal(refused.headers.get('cache-control'), 'no-store');
    assert.ok(refused.headers.get('x-request-id'));

    clock.advance(500); // one token at 2 a second
    assert.equal((await given.server.api.get(list, { token })).status, 200);
    assert.equal((await given.server.api.get(list, { token })).status, 429);
  });

  test('one key over its limit leaves another key of the same organization alone', async () => {
    const flooding = await given.server.fixtures.key(given.world.orgA);
    const quiet = await given.server.fixtures.key(given.world.orgA);
    for (let i = 0; i < 4; i++) await given.server.api.get(list, { token: flooding.token });
    assert.equal((await given.server.api.get(list, { token: flooding.token })).status, 429);
    assert.equal((await given.server.api.get(list, { token: quiet.token })).status, 200);
  });

  test("security: a key's refusals are audited as one row per key and window, with the exact count", async () => {
    const flooding = await given.server.fixtures.key(given.world.orgA);
    const other = await given.server.fixtures.key(given.world.orgA);
    const answers = [];
    for (let i = 0; i < 3 + 40; i++)
      answers.push(await given.server.api.get(list, { token: flooding.token }));
    for (let i = 0; i < 3 + 3; i++) answers.push(await given.server.api.get(list, { token: other.token }));
    assert.deepEqual(
      answers.map((r) => r.status).join(','),
      [...Array(3).fill(200), ...Array(40).fill(429), ...Array(3).fill(200), ...Array(3).fill(429)].join(','),
    );
    await given.server.flushAudit();
    const rows = await given.server.services.store.db
      .selectFrom('audit_log')
      .select(['key_id', 'organization_id', 'status', 'reason_code', 'request_count', 'request_id'])
      .where('key_id', 'in', [flooding.id, other.id])
      .execute();
    const refusals = (keyId: string) =>
      rows.filter((r) => r.key_id === keyId && r.reason_code === 'rate_limited');
    assert.deepEqual(
      refusals(flooding.id).map((r) => [r.organization_id, r.status, r.request_count]),
      [[given.world.orgA, 429, 40]],
      'forty refusals of one key: one row, not forty group commits',
    );
    assert.equal(refusals(flooding.id)[0]!.request_id, answers[3]!.headers.get('x-request-id'));
    assert.deepEqual(
      refusals(other.id).map((r) => r.request_count),
      [3],
      'each key has its own row',
    );
    const served = rows.filter((r) => r.status === 200);
    assert.equal(served.length, 6, 'answers that carried data keep one row each');
    assert.ok(served.every((r) => r.request_count === 1));
  });

  test('429 comes after the key is identified and before scopes, route enablement and the query', async () => {
    const unscoped = await given.server.fixtures.key(given.world.orgA, { scopes: [] });
    for (let i = 0; i < 3; i++) {
      const r = await given.server.api.get(`${list}?limit=abc`, { token: unscoped.token });
      assert.equal(r.body.reason_code, 'missing_scope');
      assert.ok(r.headers.get('ratelimit'), 'errors to keyed requests carry the fields too');
    }
    const r = await given.server.api.get(`${list}?limit=abc`, { token: unscoped.token });
    assert.equal(r.body.reason_code, 'rate_limited');

    const blocked = await given.server.fixtures.organization({ allowlisted: false });
    const blockedKey = await given.server.fixtures.key(blocked);
    for (let i = 0; i < 3; i++) {
      const r = await given.server.api.get(`/external/v1/encounters/${given.world.encounter}`, {
        token: blockedKey.token,
      });
      assert.equal(r.body.reason_code, 'organization_not_allowlisted');
    }
    const last = await given.server.api.get(`/external/v1/encounters/${given.world.encounter}`, {
      token: blockedKey.token,
    });
    assert.equal(last.body.reason_code, 'rate_limited');
  });

  test('a key refused once is refused the same way from the key cache, with the fields, until its budget is spent', async () => {
    const revoked = await given.server.fixtures.key(given.world.orgA, { state: 'revoked' });
    const expired = await given.server.fixtures.key(given.world.orgA, { expiresAt: clock.now() - 1 });
    for (const [key, reason] of [
      [revoked, 'revoked_key'],
      [expired, 'expired_key'],
    ] as const) {
      // The first answer comes from the store, the next two from the cache.
      for (let i = 0; i < 3; i++) {
        const r = await given.server.api.get(list, { token: key.token });
        assert.equal(r.status, 401);
        assert.equal(r.body.reason_code, reason);
        assert.match(r.headers.get('ratelimit') ?? '', new RegExp(`^"key";r=${2 - i};t=\\d+$`));
      }
      assert.equal((await given.server.api.get(list, { token: key.token })).body.reason_code, 'rate_limited');
    }
  });

  test("an organization's own rate applies to its keys, and `default` goes back to the deployment's", async () => {
    const org = await given.server.fixtures.organization();
    await updateOrganizationSettings(
      given.server.services.store.db,
      org,
      { rateLimitPerKey: 10 },
      clock.now(),
    );
    const { token } = await given.server.fixtures.key(org);
    const r = await given.server.api.get(list, { token });
    assert.equal(r.status, 200);
    // The deployment's burst-to-rate ratio (3 : 2) kept: 10 a second, burst 15.
    assert.equal(r.headers.get('ratelimit-policy'), '"key";q=15;w=2');
    for (let i = 0; i < 14; i++) assert.equal((await given.server.api.get(list, { token })).status, 200);
    assert.equal((await given.server.api.get(list, { token })).status, 429);

    const unlimited = await given.server.fixtures.organization();
    await updateOrganizationSettings(
      given.server.services.store.db,
      unlimited,
      { rateLimitPerKey: 0 },
      clock.now(),
    );
    const free = await given.server.fixtures.key(unlimited);
    for (let i = 0; i < 6; i++) {
      const answer = await given.server.api.get(list, { token: free.token });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.get('ratelimit'), null, 'no limit, no fields');
    }
  });
});

test('a refusal is held until the request could have succeeded, at most EDS_RATE_LIMIT_HOLD_MS', async () => {
  const clock = testClock();
  const server = await startTestServer('sqlite', {
    env: { ...LIMITS, EDS_RATE_LIMIT_HOLD_MS: '300' },
    clock: clock.now,
  });
  try {
    const world = await buildWorld(server.fixtures, server.putObject);
    const { token } = await server.fixtures.key(world.orgA);
    for (let i = 0; i < 3; i++)
      assert.equal((await server.api.get('/external/v1/encounters', { token })).status, 200);
    // The next token is 500 ms away on the buckets' clock: held for the bound, 300 ms. The
    // server runs in this process, so its timer cannot fire before 300 ms of this clock have
    // passed since the request was sent (a lower bound, not a timing assumption).
    const sent = performance.now();
    const refused = await server.api.get('/external/v1/encounters', { token });
    const elapsed = performance.now() - sent;
    assert.equal(refused.status, 429);
    assert.equal(refused.body.reason_code, 'rate_limited');
    assert.equal(refused.headers.get('retry-after'), '1');
    assert.ok(elapsed >= 299, `answered after ${elapsed.toFixed(1)} ms`);
  } finally {
    await server.close();
  }
});

test('requests that identify no key share a per-address budget, checked before any token lookup', async () => {
  const clock = testClock();
  const server = await startTestServer('sqlite', { env: LIMITS, clock: clock.now });
  try {
    const world = await buildWorld(server.fixtures, server.putObject);
    const path = '/external/v1/encounters';
    assert.equal((await server.api.get(path)).body.reason_code, 'missing_bearer');
    assert.equal(
      (await server.api.get(path, { token: 'eds_live_junk' })).body.reason_code,
      'malformed_token',
    );
    const refused = await server.api.get(path, { token: 'eds_live_junk' });
    assert.equal(refused.status, 429);
    assert.equal(refused.body.reason_code, 'rate_limited');
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    assert.equal(refused.headers.get('ratelimit'), null, 'no key, no key fields');

    // Over budget: a good key this process does not hold yet is refused before it is looked up.
    const blocked = await server.api.get(path, { token: world.token });
    assert.equal(blocked.body.reason_code, 'rate_limited');

    clock.advance(Number(refused.headers.get('retry-after')) * 1000);
    assert.equal((await server.api.get(path, { token: world.token })).status, 200);
    // Keyed requests (within their own burst of 3) do not spend the address budget.
    for (let i = 0; i < 2; i++)
      assert.equal((await server.api.get(path, { token: world.token })).status, 200);
    assert.equal((await server.api.get(path)).body.reason_code, 'missing_bearer');
  } finally {
    await server.close();
  }
});

forEachStore('unknown keys', (kind) => {
  test('an unknown key is refused from the key cache as after its lookup, each refusal audited and spending the address budget', async () => {
    const clock = testClock();
    const server = await startTestServer(kind, { env: LIMITS, clock: clock.now });
    try {
      const path = '/external/v1/encounters';
      const token = generateToken('live'); // well-formed, checksum and all: no key has it
      const counted = async (outcome: 'hit' | 'miss') => {
        const text = await server.services.metrics.registry.metrics();
        const line = new RegExp(`^eds_key_cache_lookups_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm');
        return Number(line.exec(text)?.[1] ?? 0);
      };
      const hits = () => counted('hit');
      const lookups = async () => (await counted('hit')) + (await counted('miss'));
      // The cache is cleared whenever authentication data changes (fixtures made for this test
      // included), so the token is sent until one refusal comes from it. Each turn refills the
      // one token of the address's budget (a burst of two) that the turn spends.
      const answers: Array<{ fromCache: boolean; answer: ApiResponse }> = [];
      await waitFor(async () => {
        clock.advance(1000);
        const before = await hits();
        const answer = await server.api.get(path, { token });
        assert.equal(answer.status, 401, answer.text);
        answers.push({ fromCache: (await hits()) > before, answer });
        return answers.some((a) => a.fromCache);
      }, 'a refusal from the key cache');
      const looked = answers[0]!;
      const cached = answers.find((a) => a.fromCache)!;
      assert.equal(looked.fromCache, false, 'the first refusal reads the store');
      for (const { answer } of [looked, cached]) {
        assert.equal(answer.headers.get('content-type'), 'application/problem+json; charset=utf-8');
        assert.equal(answer.headers.get('ratelimit'), null, 'no key identified, no key fields');
        assert.equal(answer.body.request_id, answer.headers.get('x-request-id'));
      }
      const { request_id: _looked, ...lookedBody } = looked.answer.body;
      const { request_id: _cached, ...cachedBody } = cached.answer.body;
      assert.deepEqual(cachedBody, lookedBody, 'the same problem either way');
      assert.equal(cachedBody.reason_code, 'invalid_key');

      // Every refusal spent its token, those from the cache too: one is left, then none.
      assert.equal((await server.api.get(path, { token })).status, 401);
      const refused = await server.api.get(path, { token });
      assert.equal(refused.status, 429);
      assert.equal(refused.body.reason_code, 'rate_limited');
      // Blocked now: the token is refused 429 before it is looked up, in the cache or the store.
      const lookedUpBefore = await lookups();
      assert.equal((await server.api.get(path, { token })).status, 429);
      assert.equal(await lookups(), lookedUpBefore, 'a blocked address is not looked up');

      await server.flushAudit();
      const rows = await server.services.store.db
        .selectFrom('audit_log')
        .select(['key_id', 'status', 'reason_code', 'request_count', 'request_id'])
        .where('reason_code', 'in', ['invalid_key', 'rate_limited'])
        .execute();
      assert.deepEqual(
        rows.map((r) => [r.key_id, r.status, r.reason_code, r.request_count]).sort(),
        [
          [null, 401, 'invalid_key', answers.length + 1],
          [null, 429, 'rate_limited', 2],
        ],
        'every refusal audited, folded into one row',
      );
      assert.equal(
        rows.find((r) => r.reason_code === 'invalid_key')!.request_id,
        looked.answer.headers.get('x-request-id'),
      );
    } finally {
      await server.close();
    }
  });
});

test('the client address comes from X-Forwarded-For only when the peer is a named proxy', async () => {
  const path = '/external/v1/encounters';
  const from = (address: string) => ({ headers: { 'X-Forwarded-For': address } });
  for (const trusted of [true, false]) {
    const env: Record<string, string> = {
      ...LIMITS,
      ...(trusted ? { EDS_TRUST_PROXY: '127.0.0.1/8,::1' } : {}),
    };
    const server = await startTestServer('sqlite', { env, clock: testClock().now });
    try {
      for (let i = 0; i < 2; i++) await server.api.get(path, from('203.0.113.7'));
      assert.equal((await server.api.get(path, from('203.0.113.7'))).status, 429);
      const other = await server.api.get(path, from('198.51.100.9'));
      assert.equal(other.status, trusted ? 401 : 429, `trusted=${trusted}`);
    } finally {
      await server.close();
    }
  }
});

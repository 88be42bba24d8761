/**
 * The probe's junk flood (decisions.md, Hardening): one address sending junk tokens beside a
 * partner's live key. The per-address budget protects the key lookup, so junk and unknown
 * tokens are refused, and without a store read once the address is over budget; a key the
 * process has already found usable is told from junk without a lookup, is charged to its own
 * bucket only and stays served, also once its cached answer has expired.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateToken } from '../../src/auth/token.js';
import { testClock } from '../support/clock.js';
import { startTestServer } from '../support/server.js';
import { forEachStore } from '../support/stores.js';
import { buildWorld } from '../support/world.js';

const LIMITS = {
  EDS_RATE_LIMIT_PER_KEY: '1000',
  EDS_RATE_LIMIT_BURST: '1500',
  EDS_RATE_LIMIT_UNAUTHENTICATED: '1',
};

forEachStore('the address budget beside a known key', (kind) => {
  test('a junk flood from one address leaves a key the process has found usable served and charged to its key; unknown tokens stay refused with no store read', async () => {
    const clock = testClock();
    const server = await startTestServer(kind, { env: LIMITS, clock: clock.now });
    try {
      const world = await buildWorld(server.fixtures, server.putObject);
      const path = '/external/v1/encounters';
      const unused = await server.fixtures.key(world.orgA);
      assert.equal((await server.api.get(path, { token: world.token })).status, 200, 'now in the key cache');

      const answers: string[] = [];
      const left: number[] = [];
      for (let i = 0; i < 15; i++) {
        for (const junk of ['eds_live_junk', 'not-a-key', generateToken('live')]) {
          answers.push((await server.api.get(path, { token: junk })).body.reason_code);
        }
        const keyed = await server.api.get(path, { token: world.token });
        assert.equal(keyed.status, 200, keyed.text);
        left.push(Number(/r=(\d+)/.exec(keyed.headers.get('ratelimit') ?? '')?.[1]));
      }
      assert.deepEqual(answers.slice(0, 2), ['malformed_token', 'malformed_token']);
      assert.ok(
        answers.slice(2).every((code) => code === 'rate_limited'),
        'the address is over its budget of 2',
      );
      assert.deepEqual(
        left,
        left.map((_, i) => left[0]! - i),
        'each keyed request is charged to its key once, and to nothing else',
      );

      // Still over budget: a token the process does not hold is refused without being looked up.
      const misses = async () =>
        (await server.services.metrics.keyCache.get()).values.find((v) => v.labels.outcome === 'miss')
          ?.value ?? 0;
      const before = await misses();
      assert.equal((await server.api.get(path, { token: generateToken('live') })).status, 429);
      assert.equal((await server.api.get(path, { token: unused.token })).status, 429);
      assert.equal(await misses(), before, 'no store read for a token from a blocked address');

      // Past the key cache's TTL (4 s), with the address over budget again: the known key is
      // verified anew and served.
      clock.advance(5000);
      const reblocked = [];
      for (let i = 0; i < 3; i++) reblocked.push((await server.api.get(path, { token: 'not-a-key' })).status);
      assert.deepEqual(reblocked, [401, 401, 429]);
      assert.equal((await server.api.get(path, { token: world.token })).status, 200);
      assert.equal(await misses(), before + 1, 'its expired answer was looked up again');
      assert.equal((await server.api.get(path, { token: unused.token })).status, 429);
    } finally {
      await server.close();
    }
  });
});

/**
 * What the key cache decides alone, before any lookup: only a digest it holds as no key, with no
 * previous secret to try the token under, is refused at once (a value, not a promise); anything
 * else goes on to the lookup with the digest already made, or without it when the secrets cannot
 * be had, so that the lookup answers 503 digest_key_unavailable as before.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type DigestKeyProvider, digestToken, staticDigestKey } from '../../src/auth/digest.js';
import { KeyCache } from '../../src/auth/keyCache.js';
import { generateToken } from '../../src/auth/token.js';
import { refusedFromCache, type VerifyDeps, verifyApiKey } from '../../src/auth/verifyApiKey.js';
import { loadConfig } from '../../src/config.js';
import { ApiError } from '../../src/domain/errors.js';
import { FixtureBuilder, TEST_DIGEST_SECRET } from '../support/fixtures.js';
import { createTestStore } from '../support/stores.js';

const PREVIOUS_SECRET = 'the-previous-digest-secret-for-cache-checks-0123456789';

let store: Awaited<ReturnType<typeof createTestStore>>;
before(async () => {
  store = await createTestStore('sqlite');
});
after(() => store.close());

function depsWith(digestKey: DigestKeyProvider, cache = new KeyCache(4000)): VerifyDeps {
  return {
    config: loadConfig({ EDS_DATABASE_URL: store.database.url }, store.database.dir),
    store,
    digestKey,
    cache,
    clock: () => 1_000_000,
  };
}

test('security: a token the cache holds as no key is refused at once with invalid_key', async () => {
  const deps = depsWith(staticDigestKey(TEST_DIGEST_SECRET));
  const token = generateToken('live');
  const first = refusedFromCache(deps, token);
  assert.deepEqual(first, { secret: TEST_DIGEST_SECRET, digest: digestToken(token, TEST_DIGEST_SECRET) });
  await assert.rejects(verifyApiKey(deps, token), { reasonCode: 'invalid_key' }); // the lookup caches it
  const cached = refusedFromCache(deps, token);
  assert.ok(cached instanceof ApiError, 'a value, not a promise');
  assert.equal(cached.reasonCode, 'invalid_key');
  assert.equal(cached.status, 401);
});

test('happy: a key the cache holds goes on to the lookup with its digest', async () => {
  const deps = depsWith(staticDigestKey(TEST_DIGEST_SECRET));
  const fixtures = new FixtureBuilder(store.db);
  const key = await fixtures.key(await fixtures.organization());
  assert.equal((await verifyApiKey(deps, key.token)).keyId, key.id);
  assert.deepEqual(refusedFromCache(deps, key.token), {
    secret: TEST_DIGEST_SECRET,
    digest: digestToken(key.token, TEST_DIGEST_SECRET),
  });
});

test('happy: during a rotation a token unknown under the current secret still goes to the lookup', async () => {
  const deps = depsWith(staticDigestKey(TEST_DIGEST_SECRET, PREVIOUS_SECRET));
  const token = generateToken('live');
  await assert.rejects(verifyApiKey(deps, token), { reasonCode: 'invalid_key' });
  assert.equal(
    deps.cache.get(digestToken(token, TEST_DIGEST_SECRET), deps.clock()),
    null,
    'cached as no key',
  );
  assert.equal(
    refusedFromCache(deps, token) instanceof ApiError,
    false,
    'the previous secret is tried by the lookup',
  );
});

test('error: secrets that cannot be had leave an unknown token to the lookup, which answers 503 digest_key_unavailable', async () => {
  const token = generateToken('live');
  const cache = new KeyCache(4000);
  cache.set(digestToken(token, TEST_DIGEST_SECRET), null, 1_000_000, cache.generation);
  const failing = (which: 'current' | 'previous'): DigestKeyProvider => ({
    current() {
      if (which === 'current') throw new Error('the key service is unreachable');
      return TEST_DIGEST_SECRET;
    },
    previous() {
      throw new Error('the key service is unreachable');
    },
  });
  const noCurrent = depsWith(failing('current'), cache);
  assert.equal(refusedFromCache(noCurrent, token), undefined, 'no digest can be made');
  await assert.rejects(verifyApiKey(noCurrent, token), { reasonCode: 'digest_key_unavailable' });
  const noPrevious = depsWith(failing('previous'), cache);
  assert.deepEqual(
    refusedFromCache(noPrevious, token),
    { secret: TEST_DIGEST_SECRET, digest: digestToken(token, TEST_DIGEST_SECRET) },
    'the digest goes on to the lookup, which needs the previous secret for this token',
  );
  await assert.rejects(verifyApiKey(noPrevious, token), { reasonCode: 'digest_key_unavailable' });
});

test('happy: a known key verifies while the previous secret cannot be had', async () => {
  const fixtures = new FixtureBuilder(store.db);
  const key = await fixtures.key(await fixtures.organization());
  const deps = depsWith({
    current: () => TEST_DIGEST_SECRET,
    previous() {
      throw new Error('the key service is unreachable');
    },
  });
  assert.equal(refusedFromCache(deps, key.token) instanceof ApiError, false);
  assert.equal((await verifyApiKey(deps, key.token)).keyId, key.id);
});

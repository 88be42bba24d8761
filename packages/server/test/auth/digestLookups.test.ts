/**
 * What a verification costs in store reads, counted on a real store: a key already on the current
 * secret costs exactly the one read it always did; only a digest the current secret does not know
 * tries the previous one, and unknown tokens are cached either way. Verifications of one key that
 * miss the cache together share one read.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { KyselyPlugin } from 'kysely';
import { digestToken, staticDigestKey } from '../../src/auth/digest.js';
import { KeyCache } from '../../src/auth/keyCache.js';
import { generateToken } from '../../src/auth/token.js';
import { verifyApiKey } from '../../src/auth/verifyApiKey.js';
import { loadConfig } from '../../src/config.js';
import type { Store } from '../../src/database/connection.js';
import { changeApiKeyState } from '../../src/domain/apiKeys.js';
import { createMetrics } from '../../src/metrics.js';
import { FixtureBuilder, TEST_DIGEST_SECRET } from '../support/fixtures.js';
import { createTestStore, forEachStore, type TestDatabase } from '../support/stores.js';

const NEW_SECRET = 'the-new-digest-secret-for-lookup-counting-0123456789';

/** Counts the statements sent to the store. */
class StatementCounter implements KyselyPlugin {
  count = 0;
  transformQuery: KyselyPlugin['transformQuery'] = (args) => {
    this.count++;
    return args.node;
  };
  transformResult: KyselyPlugin['transformResult'] = async (args) => args.result;
}

forEachStore('key reads', (kind) => {
  let store: Store & { database: TestDatabase; close(): Promise<void> };
  let fixtures: FixtureBuilder;
  before(async () => {
    store = await createTestStore(kind);
    fixtures = new FixtureBuilder(store.db);
  });
  after(() => store.close());

  function verifier(plugin?: KyselyPlugin, cacheTtlMs = 4000, metrics?: ReturnType<typeof createMetrics>) {
    const counter = new StatementCounter();
    const config = loadConfig({ EDS_DATABASE_URL: store.database.url }, store.database.dir);
    const db = store.db.withPlugin(counter);
    const deps = {
      config,
      store: { ...store, db: plugin ? db.withPlugin(plugin) : db },
      digestKey: staticDigestKey(NEW_SECRET, TEST_DIGEST_SECRET),
      cache: new KeyCache(cacheTtlMs),
      metrics,
      clock: Date.now,
    };
    const lookups = async () =>
      Object.fromEntries(
        (await metrics?.keyCache.get())?.values.map((v) => [v.labels.outcome, v.value]) ?? [],
      );
    return { counter, cache: deps.cache, lookups, verify: (token: string) => verifyApiKey(deps, token) };
  }

  /** A key digested with the current secret and already noted as such: one read to verify. */
  async function currentKey() {
    const key = await fixtures.key(await fixtures.organization());
    await store.db
      .updateTable('api_keys')
      .set({ digest: digestToken(key.token, NEW_SECRET), digest_secret_id: null })
      .where('id', '=', key.id)
      .execute();
    await verifier().verify(key.token); // notes the secret once
    return key;
  }

  const together = <T>(n: number, verify: () => Promise<T>) =>
    Promise.allSettled(Array.from({ length: n }, verify));

  test('verifications of a key the cache does not hold, made together, share one read and are all served', async () => {
    const key = await currentKey();
    const { counter, lookups, verify } = verifier(undefined, 4000, createMetrics());
    const answers = await together(20, () => verify(key.token));
    assert.deepEqual(
      answers.map((a) => (a.status === 'fulfilled' ? a.value.keyId : a.reason)),
      answers.map(() => key.id),
    );
    assert.equal(counter.count, 1);
    assert.deepEqual(await lookups(), { miss: 1, joined: 19 });
  });

  test('an unknown token sent many times together costs the reads of one verification', async () => {
    const junk = generateToken('live');
    const alone = verifier();
    await assert.rejects(alone.verify(junk), { reasonCode: 'invalid_key' });
    const { counter, verify } = verifier();
    const answers = await together(10, () => verify(junk));
    for (const answer of answers) {
      assert.equal(answer.status, 'rejected');
      assert.equal((answer.reason as { reasonCode?: string }).reasonCode, 'invalid_key');
    }
    assert.equal(counter.count, alone.counter.count);
  });

  test('with the key cache off, every verification reads the store', async () => {
    const key = await currentKey();
    const { counter, verify } = verifier(undefined, 0);
    const answers = await together(5, () => verify(key.token));
    assert.ok(answers.every((a) => a.status === 'fulfilled'));
    assert.equal(counter.count, 5);
  });

  test('a shared read that fails refuses every request waiting for it, and the next verification reads again', async () => {
    const key = await currentKey();
    let failing = true;
    const flaky: KyselyPlugin = {
      transformQuery: (args) => args.node,
      transformResult: async (args) => {
        if (failing) throw new Error('the key store is down');
        return args.result;
      },
    };
    const { counter, verify } = verifier(flaky);
    const answers = await together(6, () => verify(key.token));
    for (const answer of answers) {
      assert.equal(answer.status, 'rejected');
      assert.equal((answer.reason as { reasonCode?: string }).reasonCode, 'digest_key_unavailable');
    }
    assert.equal(counter.count, 1);
    failing = false;
    assert.equal((await verify(key.token)).keyId, key.id);
    assert.equal(counter.count, 2);
  });

  test('a key on the current secret costs one read; a key on the previous one is found and moved once', async () => {
    const org = await fixtures.organization();
    const previous = await fixtures.key(org); // digested with TEST_DIGEST_SECRET
    const current = await fixtures.key(org);
    await store.db
      .updateTable('api_keys')
      .set({ digest: digestToken(current.token, NEW_SECRET), digest_secret_id: null })
      .where('id', '=', current.id)
      .execute();

    const { counter, verify } = verifier();
    await verify(current.token);
    // One read, plus the one-time note of which secret made a digest stored before that was kept.
    assert.equal(counter.count, 2);
    const again = verifier();
    await again.verify(current.token);
    assert.equal(again.counter.count, 1, 'a key on the current secret: one read, no more');
    await again.verify(current.token);
    assert.equal(again.counter.count, 1, 'then cached');

    await again.verify(previous.token);
    assert.equal(again.counter.count, 1 + 3, 'unknown current digest, both digests read, moved');
    const moved = verifier();
    await moved.verify(previous.token);
    assert.equal(moved.counter.count, 1, 'once moved, one read like any current key');
  });

  test('an unknown token tries the previous secret once, then is cached as unknown', async () => {
    const { counter, verify } = verifier();
    const junk = generateToken('live');
    await assert.rejects(verify(junk), { reasonCode: 'invalid_key' });
    assert.equal(counter.count, 2);
    await assert.rejects(verify(junk), { reasonCode: 'invalid_key' });
    assert.equal(counter.count, 2);
  });

  // Holding a read's result needs a second connection for the other verification's statements:
  // PostgreSQL's pool has them; SQLite's single connection serializes reads, so no read there can
  // come back older than another verification's move.
  test('a read that missed before a concurrent move does not make the moved key unknown', {
    skip: kind === 'sqlite' && 'needs concurrent store connections',
  }, async () => {
    const org = await fixtures.organization();
    const previous = await fixtures.key(org); // digested with TEST_DIGEST_SECRET
    let held: string | undefined;
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The result of the first statement issued (the slow request's miss on the current digest)
    // is held until the other request has found the key and moved it. Chosen when issued, not
    // when answered: the pool may answer the other request's statement first, and holding that
    // one instead left both waiting for each other (a full run hung here once).
    const gate: KyselyPlugin = {
      transformQuery: (args) => {
        held ??= args.queryId.queryId;
        return args.node;
      },
      transformResult: async (args) => {
        if (args.queryId.queryId === held) await released;
        return args.result;
      },
    };
    const { cache, verify } = verifier(gate);
    const slow = verify(previous.token);
    // A change signal clears the cache and the reads under way with it, so the next verification
    // reads afresh instead of waiting for the held one.
    cache.clear();
    const fast = await verify(previous.token);
    assert.equal(fast.keyId, previous.id);
    release();
    assert.equal((await slow).keyId, previous.id);
    assert.equal((await verify(previous.token)).keyId, previous.id);
  });
  // As above: holding one read while another connection writes needs PostgreSQL's pool.
  test('security: a read under way when the cache is cleared does not put the key it saw back in the cache', {
    skip: kind === 'sqlite' && 'needs concurrent store connections',
  }, async () => {
    const key = await currentKey();
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let holding = true;
    let readDone: () => void = () => {};
    const read = new Promise<void>((resolve) => {
      readDone = resolve;
    });
    const gate: KyselyPlugin = {
      transformQuery: (args) => args.node,
      transformResult: async (args) => {
        if (holding) {
          readDone();
          await released;
        }
        return args.result;
      },
    };
    const { cache, verify } = verifier(gate);
    const inFlight = verify(key.token);
    await read; // the key was read while still active; its answer is held
    await changeApiKeyState(store.db, key.id, 'revoked', Date.now());
    cache.clear(); // as the revocation's notice does
    holding = false;
    release();
    assert.equal((await inFlight).keyId, key.id, 'the request in flight is answered from its read');
    await assert.rejects(verify(key.token), { reasonCode: 'revoked_key' });
  });
});

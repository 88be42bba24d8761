/** Deduplication by event id: once per id, TTL expiry, release on failure, concurrent claims. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type DedupeStore, MemoryDedupeStore, WebhookDeduplicator } from '../src/webhooks/index.js';

describe('MemoryDedupeStore', () => {
  it('grants a claim once until the TTL passes', () => {
    let now = 0;
    const store = new MemoryDedupeStore({ now: () => now });
    assert.equal(store.claim('evt_1', 1_000), true);
    assert.equal(store.claim('evt_1', 1_000), false);
    assert.equal(store.claim('evt_2', 1_000), true);
    now = 999;
    assert.equal(store.claim('evt_1', 1_000), false);
    now = 1_000;
    assert.equal(store.claim('evt_1', 1_000), true);
  });

  it('forgets expired claims and keeps at most maxEntries', () => {
    let now = 0;
    const store = new MemoryDedupeStore({ now: () => now, maxEntries: 3 });
    for (const id of ['a', 'b', 'c', 'd']) store.claim(id, 10);
    assert.equal(store.size, 3);
    assert.equal(store.claim('a', 10), true, 'the oldest was dropped');
    now = 100;
    store.claim('e', 10);
    assert.equal(store.size, 1, 'expired claims were swept');
  });

  it('release makes the id claimable again', () => {
    const store = new MemoryDedupeStore();
    store.claim('evt_1', 60_000);
    store.release('evt_1');
    assert.equal(store.claim('evt_1', 60_000), true);
  });
});

describe('WebhookDeduplicator', () => {
  it('runs the work once per event id and reports duplicates', async () => {
    const dedupe = new WebhookDeduplicator();
    let runs = 0;
    assert.deepEqual(await dedupe.once('evt_1', () => ++runs), { duplicate: false, result: 1 });
    assert.deepEqual(await dedupe.once('evt_1', () => ++runs), { duplicate: true });
    assert.equal(runs, 1);
  });

  it('concurrent deliveries of one event run the work once', async () => {
    const dedupe = new WebhookDeduplicator();
    let runs = 0;
    let release: () => void = () => {};
    // The work is still running while the other deliveries ask: it ends only when they have.
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const work = async () => {
      runs++;
      await held;
    };
    const pending = [dedupe.once('evt_1', work), dedupe.once('evt_1', work), dedupe.once('evt_1', work)];
    const duplicates = await Promise.all(pending.slice(1));
    release();
    const outcomes = [await pending[0]!, ...duplicates];
    assert.equal(runs, 1);
    assert.equal(outcomes.filter((o) => o.duplicate).length, 2);
  });

  it('releases the claim when the work fails, so a redelivery runs it', async () => {
    const dedupe = new WebhookDeduplicator();
    await assert.rejects(
      dedupe.once('evt_1', () => Promise.reject(new Error('boom'))),
      /boom/,
    );
    assert.deepEqual(await dedupe.once('evt_1', () => 'ok'), { duplicate: false, result: 'ok' });
  });

  it('uses a pluggable async store with the configured TTL', async () => {
    const calls: string[] = [];
    const seen = new Set<string>();
    const store: DedupeStore = {
      claim: async (id, ttl) => {
        calls.push(`claim ${id} ${ttl}`);
        if (seen.has(id)) return false;
        seen.add(id);
        return true;
      },
      release: async (id) => {
        calls.push(`release ${id}`);
        seen.delete(id);
      },
    };
    const dedupe = new WebhookDeduplicator({ store, ttlMs: 5_000 });
    await dedupe.once('evt_1', () => {});
    await dedupe.once('evt_1', () => {});
    assert.deepEqual(calls, ['claim evt_1 5000', 'claim evt_1 5000']);
  });
});

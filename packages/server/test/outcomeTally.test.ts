/**
 * Key-cache lookups are counted by outcome and added to eds_key_cache_lookups_total when it is
 * scraped: each lookup once, whatever the number of scrapes between them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createMetrics } from '../src/metrics.js';

async function byOutcome(metrics: ReturnType<typeof createMetrics>) {
  const { values } = await metrics.keyCache.get();
  return Object.fromEntries(values.map((v) => [v.labels.outcome, v.value]));
}

test('happy: each key-cache lookup is counted once under its outcome across scrapes', async () => {
  const metrics = createMetrics();
  metrics.keyCacheLookups.count('miss');
  for (let i = 0; i < 4; i++) metrics.keyCacheLookups.count('hit');
  assert.deepEqual(await byOutcome(metrics), { hit: 4, miss: 1 });
  assert.deepEqual(
    await byOutcome(metrics),
    { hit: 4, miss: 1 },
    'a scrape with nothing new changes nothing',
  );
  metrics.keyCacheLookups.count('hit');
  assert.deepEqual(await byOutcome(metrics), { hit: 5, miss: 1 });
});

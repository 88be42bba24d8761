/** The collection-pause histogram, when turned on, counts every collection, however Node.js batches them. */
import assert from 'node:assert/strict';
import { PerformanceObserver } from 'node:perf_hooks';
import { test } from 'node:test';
import type { Registry } from 'prom-client';
import { createMetrics } from '../src/metrics.js';

const NAME = 'eds_nodejs_gc_duration_seconds';

async function countsByKind(registry: Registry): Promise<Map<string, number>> {
  const values = (await registry.getSingleMetric(NAME)?.get())?.values ?? [];
  return new Map(
    values
      .filter((value) => (value as { metricName?: string }).metricName === `${NAME}_count`)
      .map((value) => [String(value.labels.kind), value.value]),
  );
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

test('every collection of a batch is counted, not only its first', async () => {
  const { registry } = createMetrics({ gcPauses: true });
  let seen = 0;
  let largestBatch = 0;
  const witness = new PerformanceObserver((list) => {
    const entries = list.getEntries();
    seen += entries.length;
    largestBatch = Math.max(largestBatch, entries.length);
  });
  witness.observe({ entryTypes: ['gc'] });
  try {
    // Short-lived garbage in one synchronous stretch: several young-generation collections
    // before Node.js hands the observers their entries, as under load.
    // A batch of two or more comes within a few stretches; the bound names a runtime that never batches.
    for (let stretch = 1; largestBatch < 2; stretch++) {
      assert.ok(stretch <= 20, `no batch held two collections in 20 stretches (largest ${largestBatch})`);
      let kept: object[] = [];
      for (let i = 0; i < 2_000_000; i++) {
        kept.push({ i, text: `entry ${i}` });
        if (kept.length > 10_000) kept = [];
      }
      while (seen === 0) await nextTurn();
      await nextTurn();
    }
    const counted = [...(await countsByKind(registry)).values()].reduce((a, b) => a + b, 0);
    // The histogram's observer was subscribed first, so it has seen at least what the witness saw.
    assert.ok(counted >= seen, `counted ${counted} collections, the witness saw ${seen}`);
    assert.ok((await countsByKind(registry)).get('minor')! >= 2);
  } finally {
    witness.disconnect();
  }
});

test('the metric is one histogram by kind, as the default collector named it', async () => {
  const { registry } = createMetrics({ gcPauses: true });
  const text = await registry.metrics();
  assert.equal(text.match(/^# TYPE eds_nodejs_gc_duration_seconds histogram$/gm)?.length, 1);
  const metric = await registry.getSingleMetric(NAME)?.get();
  assert.match(metric?.help ?? '', /by kind, one of major, minor, incremental or weakcb/);
});

test('closed with its services, the metric stops observing', async () => {
  const metrics = createMetrics({ gcPauses: true });
  metrics.close();
  let seen = 0;
  const witness = new PerformanceObserver((list) => {
    seen += list.getEntries().length;
  });
  witness.observe({ entryTypes: ['gc'] });
  try {
    while (seen === 0) {
      let kept: object[] = [];
      for (let i = 0; i < 500_000; i++) {
        kept.push({ i });
        if (kept.length > 10_000) kept = [];
      }
      await nextTurn();
    }
    await nextTurn();
    const counted = [...(await countsByKind(metrics.registry)).values()].reduce((a, b) => a + b, 0);
    assert.equal(counted, 0);
  } finally {
    witness.disconnect();
  }
});

/** The process and runtime metrics: prom-client's defaults, the collection histogram only when asked for. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { createMetrics } from '../src/metrics.js';

const GC_HISTOGRAM = 'eds_nodejs_gc_duration_seconds';

async function metricNames(registry: Registry): Promise<string[]> {
  return (await registry.getMetricsAsJSON()).map((metric) => metric.name).sort();
}

test('happy: every default metric prom-client collects is scraped, under the service prefix', async () => {
  const defaults = new Registry();
  collectDefaultMetrics({ register: defaults, prefix: 'eds_' });
  const { registry, close } = createMetrics();
  try {
    const scraped = new Set(await metricNames(registry));
    const expected = (await metricNames(defaults)).filter(
      // The histogram is off by default; the three gauges named like counters are left out on purpose.
      (name) => name !== GC_HISTOGRAM && !/^eds_nodejs_active_\w+_total$/.test(name),
    );
    assert.ok(expected.length >= 10, `prom-client's defaults: ${expected.join(', ')}`);
    for (const name of expected) assert.ok(scraped.has(name), `${name} is scraped`);
    // The collectors' own work runs when scraped: a value, not only a declaration.
    assert.match(await registry.metrics(), /^eds_process_resident_memory_bytes \d+/m);
    assert.match(await registry.metrics(), /^eds_nodejs_eventloop_lag_p99_seconds [\d.e-]+$/m);
  } finally {
    close();
  }
});

test('happy: the collection histogram is left out unless asked for, and there when it is', async () => {
  const off = createMetrics();
  const on = createMetrics({ gcPauses: true });
  try {
    assert.equal(off.registry.getSingleMetric(GC_HISTOGRAM), undefined);
    assert.doesNotMatch(await off.registry.metrics(), /gc_duration/);
    assert.match(await on.registry.metrics(), /^# TYPE eds_nodejs_gc_duration_seconds histogram$/m);
  } finally {
    off.close();
    on.close();
  }
});

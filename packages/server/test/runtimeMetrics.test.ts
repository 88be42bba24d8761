/** The process and runtime metrics: prom-client's defaults, the collection histogram only when asked for. */
import assert from 'node:assert/strict';
import { PerformanceObserver } from 'node:perf_hooks';
import { test } from 'node:test';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { createMetrics } from '../src/metrics.js';
import { startTestServer } from './support/server.js';

const GC_HISTOGRAM = 'eds_nodejs_gc_duration_seconds';

async function metricNames(registry: Registry): Promise<string[]> {
  return (await registry.getMetricsAsJSON()).map((metric) => metric.name).sort();
}

test('happy: every default metric prom-client collects but its collection histogram (and the gauges named like counters) is scraped, under the service prefix', async () => {
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

/** How many observers of garbage collections `make` subscribes (prom-client's and the service's alike). */
function collectionObserversSubscribedBy(make: () => void): number {
  const observe = PerformanceObserver.prototype.observe;
  let subscribed = 0;
  PerformanceObserver.prototype.observe = function (options) {
    const types: readonly string[] = 'entryTypes' in options ? options.entryTypes : [options.type];
    if (types.includes('gc')) subscribed++;
    observe.call(this, options);
  };
  try {
    make();
  } finally {
    PerformanceObserver.prototype.observe = observe;
  }
  return subscribed;
}

test('happy: no observer of garbage collections is subscribed unless the histogram is asked for, and one when it is', () => {
  const made: ReturnType<typeof createMetrics>[] = [];
  try {
    assert.equal(
      collectionObserversSubscribedBy(() => made.push(createMetrics())),
      0,
    );
    assert.equal(
      collectionObserversSubscribedBy(() => made.push(createMetrics({ gcPauses: true }))),
      1,
    );
  } finally {
    for (const metrics of made) metrics.close();
  }
});

test('happy: the service scrapes the collection histogram with EDS_METRICS_GC_PAUSES=true, and not by default', async () => {
  for (const [env, expected] of [
    [{}, false],
    [{ EDS_METRICS_GC_PAUSES: 'true' }, true],
  ] as const) {
    const server = await startTestServer('sqlite', { env });
    try {
      const text = await server.services.metrics.registry.metrics();
      assert.equal(
        /^# TYPE eds_nodejs_gc_duration_seconds histogram$/m.test(text),
        expected,
        JSON.stringify(env),
      );
    } finally {
      await server.close();
    }
  }
});

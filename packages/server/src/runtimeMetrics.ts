/**
 * prom-client's default metrics of the process and the Node.js runtime, but for its
 * garbage-collection histogram, which is the service's own and only there when asked for
 * (gcDurationMetric.ts).
 *
 * `collectDefaultMetrics` has no way to leave a metric out, and its collection histogram
 * subscribes a `PerformanceObserver` to every collection for the life of the process. Node.js
 * then builds an entry for each collection (with a map and deprecated accessors per entry) and
 * holds it until the next turn of the event loop; under full load the entries outlive
 * young-generation collections and are promoted, and the serving process peaked 2-13 MB
 * higher with the observers than without (docs/benchmarks.md). So each default collector but that
 * one is registered here, from the list prom-client keeps of them.
 */
import { createRequire } from 'node:module';
import { collectDefaultMetrics, type Registry } from 'prom-client';

const require = createRequire(import.meta.url);

/** A default collector's signature, as `collectDefaultMetrics` calls each one. */
type DefaultCollector = (
  registry: Registry,
  config: { prefix: string; eventLoopMonitoringPrecision: number },
) => void;

/** The name prom-client's list gives its collection histogram. */
const GC_COLLECTOR = 'gc';

/** Registers prom-client's default metrics in `registry`, names prefixed, without its GC histogram. */
export function registerRuntimeMetrics(registry: Registry, prefix: string): void {
  for (const name of collectDefaultMetrics.metricsList) {
    if (name === GC_COLLECTOR) continue;
    // prom-client keeps each default collector in a module of the same name.
    const collector = require(`prom-client/lib/metrics/${name}.js`) as DefaultCollector;
    // 10 ms: `collectDefaultMetrics`' own event-loop sampling interval.
    collector(registry, { prefix, eventLoopMonitoringPrecision: 10 });
  }
}

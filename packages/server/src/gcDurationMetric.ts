/**
 * `nodejs_gc_duration_seconds` with every collection counted, registered when an operator turns it
 * on (`EDS_METRICS_GC_PAUSES`; runtimeMetrics.ts says why it is off by default). prom-client's
 * default collector of that name records only the first entry of each batch Node.js hands its
 * observer, and a batch holds every collection since the last turn of the event loop: in a
 * measured run of back-to-back work its histogram counted 122 of 155 young-generation
 * collections, with up to 11 in one batch. This one keeps its name, help, buckets and `kind`
 * label, and observes each entry.
 */
import { constants, type NodeGCPerformanceDetail, PerformanceObserver } from 'node:perf_hooks';
import { Histogram, type Registry } from 'prom-client';

const BUCKETS = [0.001, 0.01, 0.1, 1, 2, 5];

const KINDS: Readonly<Record<number, string>> = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

/** Registers the histogram as `name` in `registry` and starts observing; returns what stops it. */
export function observeGcDurations(registry: Registry, name: string): () => void {
  const histogram = new Histogram({
    name,
    help: 'Garbage collection duration by kind, one of major, minor, incremental or weakcb.',
    labelNames: ['kind'] as const,
    buckets: BUCKETS,
    registers: [registry],
  });
  const byKind = new Map(Object.entries(KINDS).map(([code, kind]) => [Number(code), histogram.labels(kind)]));
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      // A gc entry's `detail` (Node.js's types leave it off the base entry).
      const detail = (entry as { detail?: NodeGCPerformanceDetail }).detail;
      if (detail !== undefined) byKind.get(detail.kind)?.observe(entry.duration / 1000);
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return () => observer.disconnect();
}

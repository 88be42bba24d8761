/**
 * The HTTP latency histogram by route and status, observed in plain cells and written out when
 * scraped. prom-client's `Histogram#observe` allocates a label object, checks the labels, builds
 * and looks up a string of the label set and finds the bucket through a string-keyed object on
 * every observation, which every answer pays; here it is two map lookups and a bounds scan.
 *
 * The registry sees an ordinary histogram: it reads `get()` (and `reset()`), as it does of
 * prom-client's own metrics, and gets the same series in the same order, so the exposition is
 * byte for byte what prom-client's histogram would write.
 */
import type { Metric, Registry } from 'prom-client';

/** One line of the exposition: prom-client's metric value with its series name. */
interface HistogramLine {
  metricName: string;
  labels: { le?: number | '+Inf'; route: string; status: number };
  value: number;
}

interface Cell {
  readonly route: string;
  readonly status: number;
  /** Observations per bucket, not cumulative; the last is above every bound (`+Inf`). */
  readonly counts: Float64Array;
  sum: number;
}

export interface RouteLatencyHistogramOptions {
  name: string;
  help: string;
  /** Upper bounds in seconds, ascending. */
  buckets: readonly number[];
  registers: readonly Registry[];
}

export class RouteLatencyHistogram {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram' as const;
  readonly aggregator = 'sum' as const;
  private readonly bounds: Float64Array;
  private readonly cells = new Map<string, Map<number, Cell>>();
  /** The cells in the order of their first answer, the order prom-client writes its series in. */
  private series: Cell[] = [];

  constructor(options: RouteLatencyHistogramOptions) {
    this.name = options.name;
    this.help = options.help;
    for (let i = 1; i < options.buckets.length; i++) {
      if (!(options.buckets[i]! > options.buckets[i - 1]!)) {
        throw new Error(`${options.name}: bucket bounds must ascend`);
      }
    }
    this.bounds = Float64Array.from(options.buckets);
    // The registry reads only what its own metrics have in common: name, type, get() and reset().
    for (const registry of options.registers) registry.registerMetric(this as unknown as Metric);
  }

  /** One answer's time; a time that is not a finite number is not counted. */
  observe(route: string, status: number, seconds: number): void {
    if (!Number.isFinite(seconds)) return;
    let byStatus = this.cells.get(route);
    if (byStatus === undefined) {
      byStatus = new Map();
      this.cells.set(route, byStatus);
    }
    let cell = byStatus.get(status);
    if (cell === undefined) {
      cell = { route, status, counts: new Float64Array(this.bounds.length + 1), sum: 0 };
      byStatus.set(status, cell);
      this.series.push(cell);
    }
    const bounds = this.bounds;
    let bucket = 0;
    while (bucket < bounds.length && seconds > bounds[bucket]!) bucket++;
    cell.counts[bucket]!++;
    cell.sum += seconds;
  }

  /** The histogram as prom-client's registry writes it: cumulative buckets, then sum and count. */
  async get() {
    const values: HistogramLine[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const { route, status, counts, sum } of this.series) {
      let cumulative = 0;
      for (let i = 0; i < counts.length; i++) {
        cumulative += counts[i]!;
        const le = i < this.bounds.length ? this.bounds[i]! : '+Inf';
        values.push({ metricName: bucketName, labels: { le, route, status }, value: cumulative });
      }
      values.push({ metricName: `${this.name}_sum`, labels: { route, status }, value: sum });
      values.push({ metricName: `${this.name}_count`, labels: { route, status }, value: cumulative });
    }
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values,
    };
  }

  reset(): void {
    this.cells.clear();
    this.series = [];
  }
}

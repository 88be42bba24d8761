/**
 * Responses counted by route, status and reason code in plain cells, added to the Prometheus
 * counter when it is scraped. prom-client builds and looks up a string of the label set on every
 * `inc()`; three map lookups of values the process already holds cost a fraction of that, on
 * every answer.
 */
import type { Counter } from 'prom-client';

export type ResponseLabel = 'route' | 'status' | 'reason_code';

interface Cell {
  readonly labels: Record<ResponseLabel, string | number>;
  uncounted: number;
}

export class ResponseTally {
  private readonly byRoute = new Map<string, Map<number, Map<string, Cell>>>();

  /** One response; `reasonCode` is '' for an answer without one. */
  count(route: string, status: number, reasonCode: string): void {
    let byStatus = this.byRoute.get(route);
    if (byStatus === undefined) {
      byStatus = new Map();
      this.byRoute.set(route, byStatus);
    }
    let byReason = byStatus.get(status);
    if (byReason === undefined) {
      byReason = new Map();
      byStatus.set(status, byReason);
    }
    const cell = byReason.get(reasonCode);
    if (cell === undefined) {
      byReason.set(reasonCode, { labels: { route, status, reason_code: reasonCode }, uncounted: 1 });
    } else cell.uncounted++;
  }

  /** Adds what was counted since the last call to `counter`. */
  addTo(counter: Counter<ResponseLabel>): void {
    for (const byStatus of this.byRoute.values()) {
      for (const byReason of byStatus.values()) {
        for (const cell of byReason.values()) {
          if (cell.uncounted === 0) continue;
          counter.inc(cell.labels, cell.uncounted);
          cell.uncounted = 0;
        }
      }
    }
  }
}

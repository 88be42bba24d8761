/**
 * Counts by outcome (a counter's one label), added to the Prometheus counter when it is scraped:
 * prom-client builds and looks up a string of the label set on every `inc()`, which every keyed
 * request would pay for its key-cache lookup (see responseTally.ts for the responses' counter).
 */
import type { Counter } from 'prom-client';

export class OutcomeTally<Outcome extends string> {
  private readonly uncounted = new Map<Outcome, number>();

  count(outcome: Outcome): void {
    this.uncounted.set(outcome, (this.uncounted.get(outcome) ?? 0) + 1);
  }

  /** Adds what was counted since the last call to `counter`, under its label `outcome`. */
  addTo(counter: Counter<'outcome'>): void {
    for (const [outcome, count] of this.uncounted) {
      if (count === 0) continue;
      counter.inc({ outcome }, count);
      this.uncounted.set(outcome, 0);
    }
  }
}

/**
 * Group commit for attempt completions. Each completion is a small transaction, and on a real
 * disk the commit (WAL flush) dominates: one per delivery caps a worker at a few hundred
 * deliveries a second. Completions are therefore written together: the first one is flushed at
 * once, and those that arrive while a flush is running go out in the next one, so batching adds
 * no delay when the worker is quiet and saves most commits when it is busy.
 */
import type { Db } from '../database/connection.js';
import type { AttemptOutcome } from '../database/schema.js';
import { type CompletionInput, completeAttempts } from '../store/webhookDeliveries.js';
import type { PausedEndpoint } from '../store/webhookEndpointHealth.js';

const MAX_BATCH = 256;

interface Pending {
  input: CompletionInput;
  resolve: (outcome: AttemptOutcome) => void;
  reject: (error: unknown) => void;
}

export class CompletionWriter {
  private queue: Pending[] = [];
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly pauseAfterMs: number,
    /** Told of each subscription a completion paused, once. */
    private readonly onPaused: (paused: PausedEndpoint) => void,
  ) {}

  complete(input: CompletionInput): Promise<AttemptOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ input, resolve, reject });
      if (!this.flushing) this.flushing = this.drain();
    });
  }

  /** Resolves once everything queued so far is written. */
  async idle(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, MAX_BATCH);
        try {
          const { outcomes, paused } = await completeAttempts(
            this.db,
            batch.map((p) => p.input),
            this.pauseAfterMs,
          );
          for (const [i, p] of batch.entries()) p.resolve(outcomes[i]!);
          for (const p of paused) this.onPaused(p);
        } catch (error) {
          // The claims stay leased and expire; the deliveries are attempted again (at least once).
          for (const p of batch) p.reject(error);
        }
      }
    } finally {
      this.flushing = undefined;
    }
  }
}

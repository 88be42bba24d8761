import { MemoryDedupeStore } from '../../src/webhooks/index.js';

/**
 * Claims of the deduplicator, as they are decided: the work of a delivery runs after its 204, so
 * a test knows a redelivery was skipped once its claim has been refused, not after some time.
 */
export function observedClaims() {
  const store = new MemoryDedupeStore();
  const decided: boolean[] = [];
  const waiters: (() => void)[] = [];
  return {
    decided,
    store: {
      claim(eventId: string, ttlMs: number) {
        const won = store.claim(eventId, ttlMs);
        decided.push(won);
        for (const wake of waiters.splice(0)) wake();
        return won;
      },
      release: (eventId: string) => store.release(eventId),
    },
    /** Resolves once `count` claims have been decided. */
    async until(count: number): Promise<void> {
      while (decided.length < count) await new Promise<void>((resolve) => waiters.push(resolve));
    },
  };
}

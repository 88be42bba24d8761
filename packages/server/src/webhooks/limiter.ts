/**
 * A concurrency limit per key (the receiver's origin): at most `limit` attempts in flight to one
 * receiver, whatever the number of deliveries waiting for it, so one slow receiver cannot take
 * every slot and a burst does not hammer one endpoint. Waiters are served in arrival order.
 */
export class KeyedLimiter {
  private readonly active = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();

  constructor(private readonly limit: number) {}

  /** Resolves true once a slot is held, or false if `signal` aborts first (no slot held). */
  acquire(key: string, signal?: AbortSignal): Promise<boolean> {
    if (signal?.aborted) return Promise.resolve(false);
    const count = this.active.get(key) ?? 0;
    if (count < this.limit) {
      this.active.set(key, count + 1);
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const queue = this.waiting.get(key) ?? [];
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve(true);
      };
      const onAbort = () => {
        const list = this.waiting.get(key);
        const at = list?.indexOf(grant) ?? -1;
        if (list && at >= 0) list.splice(at, 1);
        resolve(false);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      queue.push(grant);
      this.waiting.set(key, queue);
    });
  }

  release(key: string): void {
    const queue = this.waiting.get(key);
    const next = queue?.shift();
    if (queue && queue.length === 0) this.waiting.delete(key);
    // The slot passes straight to the next waiter; the count stays the same.
    if (next) {
      next();
      return;
    }
    const count = (this.active.get(key) ?? 1) - 1;
    if (count <= 0) this.active.delete(key);
    else this.active.set(key, count);
  }
}

/** Last-used times of keys, collected in memory and written every few seconds, off the hot path. */

import type { Db } from '../database/connection.js';
import type { Logger } from '../logger.js';
import { touchApiKeys } from '../store/apiKeys.js';

export class LastUsedTracker {
  private seen = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    intervalMs = 5000,
  ) {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  record(keyId: string, at: number): void {
    this.seen.set(keyId, at);
  }

  async flush(): Promise<void> {
    if (this.seen.size === 0) return;
    const batch = this.seen;
    this.seen = new Map();
    try {
      await touchApiKeys(this.db, batch);
    } catch (error) {
      // A lost last-used time is harmless; the next request records it again.
      this.logger.warn(
        { err: { message: (error as Error).message } },
        'could not record key last-used times',
      );
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}

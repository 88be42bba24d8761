/**
 * Records that disclose nothing and need not hold their answers (refusals that name no key, and
 * keys' 429s) are queued in memory and written in batches after their answers (every other keyed
 * request is committed before its answer instead, see groupCommit.ts). A failed batch is kept and
 * retried, never dropped silently; the queue is flushed on shutdown. The flush window (how much a
 * crash can lose) is `flushIntervalMs`.
 *
 * A request refused before any key was identified (malformed or unknown token, keys disabled on
 * the deployment, digest key unavailable) names no organization and no key, and an attacker can
 * send them as fast as the network allows. Within a flush window those are folded into one row
 * per method, route, status and reason with a `request_count`, so junk costs neither a store
 * write per request nor unbounded audit growth; the counts are exact. A key refused 429
 * (rate_limited) is folded the same way, one row per key: a flood past the limit discloses
 * nothing and is as cheap to record as it is to refuse.
 */

import type { AuditInsert } from '../database/schema.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { AuditWriter } from './auditWriter.js';

export interface AuditQueueOptions {
  writer: Pick<AuditWriter, 'write'>;
  flushIntervalMs: number;
  batchSize: number;
  logger: Logger;
  metrics?: Metrics;
  /** Records per transaction within a flush (default 100). */
  sliceSize?: number;
  /** Above this many waiting records, every push logs an error: the store is not keeping up. */
  warnAbove?: number;
}

/**
 * The records folded per flush window instead of written one by one: refusals that identified
 * no key, and a key's 429s. Neither discloses data, and both come as fast as a client sends them.
 * The HTTP layer asks the same question to decide that such a record waits for nothing.
 */
export function isFoldedRecord(
  record: Pick<AuditInsert, 'key_id' | 'organization_id' | 'reason_code'>,
): boolean {
  return (record.key_id === null && record.organization_id === null) || record.reason_code === 'rate_limited';
}

type FoldedRow = AuditInsert & { request_count: number };

/** Whether `record` folds into `row`: the fields the fold's key is made of are the same. */
function sameFoldedRow(row: FoldedRow, record: AuditInsert): boolean {
  return (
    row.reason_code === record.reason_code &&
    row.status === record.status &&
    row.route === record.route &&
    row.method === record.method &&
    row.key_id === record.key_id &&
    row.organization_id === record.organization_id
  );
}

export class AuditQueue {
  private pending: AuditInsert[] = [];
  private folded = new Map<string, FoldedRow>();
  /** The row the last folded record went to: a flood repeats one row, found without its key. */
  private lastFolded: FoldedRow | undefined;
  private flushing: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;
  private failures = 0;

  constructor(private readonly options: AuditQueueOptions) {
    this.timer = setInterval(() => void this.flush(), options.flushIntervalMs);
    this.timer.unref();
  }

  push(record: AuditInsert): void {
    if (isFoldedRecord(record)) {
      this.fold(record);
      return;
    }
    this.pending.push(record);
    if (this.pending.length >= this.options.batchSize) void this.flush();
    const warnAbove = this.options.warnAbove ?? 100_000;
    if (this.pending.length > warnAbove && this.pending.length % 1000 === 0) {
      this.options.logger.error({ waiting: this.pending.length }, 'audit queue is not draining');
    }
  }

  /**
   * Keeps the window's first request (time, request id) and the slowest duration. The encounter
   * and document IDs are the first request's only while the row stands for one request: a row
   * for many would otherwise tie them all to one ID.
   */
  private fold(record: AuditInsert): void {
    let row = this.lastFolded;
    if (row === undefined || !sameFoldedRow(row, record)) {
      const key = `${record.organization_id} ${record.key_id} ${record.method} ${record.route} ${record.status} ${record.reason_code}`;
      row = this.folded.get(key);
      if (row === undefined) {
        this.lastFolded = { ...record, request_count: 1 };
        this.folded.set(key, this.lastFolded);
        return;
      }
      this.lastFolded = row;
    }
    row.request_count++;
    row.encounter_id = null;
    row.document_id = null;
    if (record.duration_ms > row.duration_ms) row.duration_ms = record.duration_ms;
  }

  get depth(): number {
    return this.pending.length + this.folded.size;
  }

  /** Writes everything queued so far; resolves when it is stored (or has failed and is kept). */
  async flush(): Promise<void> {
    if (this.folded.size > 0) {
      for (const row of this.folded.values()) this.pending.push(row);
      this.folded.clear();
      this.lastFolded = undefined;
    }
    if (this.flushing) {
      await this.flushing;
      if (this.pending.length === 0) return;
    }
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.flushing = this.write(batch).finally(() => {
      this.flushing = undefined;
    });
    await this.flushing;
  }

  /**
   * Writes in slices, each its own transaction, with other work let in between, so a large flush
   * does not hold the writer from the group commits of waiting responses. A failed slice and
   * everything after it go back in front.
   */
  private async write(batch: AuditInsert[]): Promise<void> {
    const sliceSize = this.options.sliceSize ?? 100;
    for (let i = 0; i < batch.length; i += sliceSize) {
      if (i > 0) await new Promise((resolve) => setImmediate(resolve));
      const slice = batch.slice(i, i + sliceSize);
      try {
        await this.options.writer.write(slice);
      } catch (error) {
        this.pending = batch.slice(i).concat(this.pending);
        this.failures++;
        this.options.metrics?.auditWriteFailures.inc();
        if (this.failures === 1 || this.failures % 50 === 0) {
          this.options.logger.error(
            { err: { message: (error as Error).message }, waiting: this.pending.length },
            'audit batch write failed; will retry',
          );
        }
        return;
      }
      this.failures = 0;
      this.options.metrics?.auditWritten.inc(slice.length);
    }
  }

  /** Stops the timer and writes what is left, retrying for up to `timeoutMs`. */
  async close(timeoutMs = 5000): Promise<void> {
    clearInterval(this.timer);
    const deadline = Date.now() + timeoutMs;
    while (this.depth > 0 || this.flushing) {
      await this.flush();
      if (this.depth === 0) break;
      if (Date.now() > deadline) {
        this.options.logger.error(
          { lost: this.pending.length },
          'audit records could not be written before shutdown',
        );
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

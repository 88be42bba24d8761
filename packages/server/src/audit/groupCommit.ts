/**
 * Durable audit before the answer, by group commit (decisions.md, Audit): each keyed request's
 * record joins the current group and its response waits for that group's commit. While one group
 * is being committed the next one gathers, and is committed as soon as the first is done, so
 * under load commits run back to back (one every few milliseconds) and each carries every record
 * that arrived meanwhile; an idle service commits a lone record at once.
 *
 * A group the store does not take fails every response waiting on it, as does a commit that has
 * not finished within `timeoutMs`; the callers answer 503 audit_unavailable instead of the data.
 * Nothing is retried on their behalf: the next requests simply form the next group, so the
 * service recovers by itself as soon as the store takes writes again.
 */
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { AuditRecord } from '../store/auditRows.js';
import type { AuditWriter } from './auditWriter.js';

export class AuditUnavailableError extends Error {}

interface Member {
  record: AuditRecord;
  settle(error?: Error): void;
}

export interface GroupCommitOptions {
  writer: AuditWriter;
  /** Most records in one transaction; more wait for the next group. */
  maxRecords: number;
  timeoutMs: number;
  logger: Logger;
  metrics?: Metrics;
}

export class GroupCommit {
  private group: Member[] = [];
  private running = false;
  private failures = 0;

  constructor(private readonly options: GroupCommitOptions) {}

  /** Resolves once the record is committed; rejects with AuditUnavailableError otherwise. */
  commit(record: AuditRecord): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let done = false;
      const timer = setTimeout(
        () => settle(new AuditUnavailableError('audit commit timed out')),
        this.options.timeoutMs,
      );
      const settle = (error?: Error) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (error)
          reject(error instanceof AuditUnavailableError ? error : new AuditUnavailableError(error.message));
        else resolve();
      };
      this.group.push({ record, settle });
      if (!this.running) {
        this.running = true;
        // Let the requests of this turn of the event loop join the first group.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.group.length > 0) {
      const members = this.group.splice(0, this.options.maxRecords);
      this.options.metrics?.auditGroupRecords.observe(members.length);
      const endTimer = this.options.metrics?.auditGroupCommitDuration.startTimer();
      try {
        await this.options.writer.write(members.map((m) => m.record));
        endTimer?.();
        this.failures = 0;
        this.options.metrics?.auditWritten.inc(members.length);
        for (const member of members) member.settle();
      } catch (error) {
        this.failures++;
        this.options.metrics?.auditWriteFailures.inc();
        if (this.failures === 1 || this.failures % 50 === 0) {
          this.options.logger.error(
            { err: { message: (error as Error).message }, failed_groups: this.failures },
            'audit group commit failed; its responses are refused',
          );
        }
        for (const member of members) member.settle(error as Error);
      }
    }
    this.running = false;
  }

  /** Waits for groups already handed over (new commits after this are not waited for). */
  async close(): Promise<void> {
    while (this.running) await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * Keeps the audit commits on PostgreSQL from merging the per-patient index themselves.
 *
 * That index (`audit_patient_sets_members`, migration 010) is a GIN index with fast update: a new
 * patient set's entries go to a pending list. The insert that finds the list over its limit
 * (`gin_pending_list_limit`, 4 MB) merges the whole list into the index before it returns. That
 * insert is an audit group commit, and every keyed answer waits for it. A list page never disclosed
 * before adds a set, so a partner paging through its encounters fills the list in seconds. At
 * 1,000,000 encounters each merge held the commits for 80-130 ms; `bench/ginPendingList.ts`
 * measured 800-920 ms.
 *
 * This merges the list from a connection of its own, every EDS_AUDIT_INDEX_MERGE_MS, with
 * `gin_clean_pending_list`: the list stays small, and an insert that finds it over its limit while
 * a merge runs leaves the work to that merge instead of waiting for it.
 */
import { sql } from 'kysely';
import type { Store } from '../database/connection.js';
import type { Logger } from '../logger.js';

const INSUFFICIENT_PRIVILEGE = '42501';
const LOCK_NOT_AVAILABLE = '55P03';
/**
 * How long a merge waits for a lock on the index: held by an operator's REINDEX or VACUUM FULL, or
 * by an insert merging the list itself. Past it the merge gives way and the next one tries again,
 * so a process stopping waits at most that long on someone else's lock.
 */
const MERGE_LOCK_TIMEOUT = '1s';
/** Merges in a row that gave way to a lock before the operator is told: about a minute of them. */
const GIVE_WAYS_BEFORE_WARNING = 60;

export class AuditIndexMerger {
  private timer: NodeJS.Timeout | undefined;
  private merging: Promise<void> | undefined;
  private stopped = false;
  private failing = false;
  private gaveWay = 0;

  constructor(
    private readonly store: Pick<Store, 'db' | 'close'>,
    private readonly logger: Logger,
    private readonly intervalMs: number,
    private readonly giveWaysBeforeWarning = GIVE_WAYS_BEFORE_WARNING,
  ) {}

  start(): void {
    this.schedule();
  }

  /** Merges the pending list once; resolves with the pages merged (0 when it failed). */
  async mergeOnce(): Promise<number> {
    try {
      const rows = await this.store.db.transaction().execute(async (tx) => {
        await sql`set local lock_timeout = ${sql.lit(MERGE_LOCK_TIMEOUT)}`.execute(tx);
        const merged = await sql<{ pages: number }>`select
          gin_clean_pending_list('audit_patient_sets_members'::regclass) as pages`.execute(tx);
        return merged.rows;
      });
      if (this.failing) this.logger.info('the audit index merges again');
      this.failing = false;
      this.gaveWay = 0;
      return Number(rows[0]?.pages ?? 0);
    } catch (error) {
      const { code, message } = error as { code?: string; message?: string };
      if (code === LOCK_NOT_AVAILABLE) {
        // A lock held for seconds is routine; one held for a minute is someone's long operation.
        if (++this.gaveWay === this.giveWaysBeforeWarning && !this.failing) {
          this.failing = true;
          this.logger.warn(
            { err: { code, message }, merges: this.gaveWay },
            "the audit index's pending list has not been merged for a while: a lock on audit_patient_sets_members is held (a REINDEX or VACUUM FULL?), so audit commits merge it themselves meanwhile",
          );
        }
        return 0;
      }
      if (code === INSUFFICIENT_PRIVILEGE) {
        // Only the table's owner may merge its index: audit commits go on merging it themselves.
        this.stopped = true;
        this.logger.warn(
          { err: { code, message } },
          "the audit index's pending list is not merged in the background: this role does not own audit_patient_sets, so audit commits merge it themselves (make this role its owner, or set EDS_AUDIT_INDEX_MERGE_MS=0)",
        );
      } else if (!this.failing) {
        this.failing = true;
        this.logger.warn(
          { err: { code, message } },
          "could not merge the audit index's pending list; retrying",
        );
      }
      return 0;
    }
  }

  async close(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.merging;
    await this.store.close();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.merging = this.mergeOnce().then(() => {
        this.merging = undefined;
        this.schedule();
      });
    }, this.intervalMs);
    this.timer.unref();
  }
}

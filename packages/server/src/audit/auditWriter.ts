/**
 * Where audit records are committed. The group committer and the queue of folded refusals only
 * know this interface, so the writer stays replaceable (another store, a log shipper). Both
 * built-in writers keep audit writes off the request thread's store connection: SQLite in a
 * worker thread with its own connection, PostgreSQL on a pool connection of its own.
 */

import type { Store } from '../database/connection.js';
import { insertAuditRecords } from '../store/audit.js';
import type { AuditRecord } from '../store/auditRows.js';

export interface AuditWriter {
  /** Commits the records in one transaction; rejects when the store did not take them all. */
  write(records: readonly AuditRecord[]): Promise<void>;
  /** Resolves when the writer can take records (before the service starts answering). */
  start?(): Promise<void>;
  close(): Promise<void>;
}

/** Writes through a Kysely connection (PostgreSQL, or an in-memory SQLite no thread can open). */
export class KyselyAuditWriter implements AuditWriter {
  constructor(
    private readonly store: Pick<Store, 'db'>,
    private readonly onClose: () => Promise<void> = async () => {},
  ) {}

  write(records: readonly AuditRecord[]): Promise<void> {
    return insertAuditRecords(this.store.db, records);
  }

  close(): Promise<void> {
    return this.onClose();
  }
}

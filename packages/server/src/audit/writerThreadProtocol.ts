/**
 * The messages between the request thread and the SQLite audit writer thread. A module of its
 * own: the thread's module opens the database when loaded, so the request thread imports only
 * this.
 */
import type { AuditRecord } from '../store/auditRows.js';

export interface WriterThreadData {
  path: string;
  busyTimeoutMs: number;
  synchronous: 'full' | 'normal';
  /** How often to checkpoint the WAL; 0: never (the connection's own automatic checkpoints). */
  checkpointIntervalMs: number;
}

export interface WriteRequest {
  id: number;
  records: readonly AuditRecord[];
}

/** Asks the thread to checkpoint a last time and close its connection. */
export interface CloseRequest {
  close: true;
}

/** A group's id, or one of these (with `error` when something failed). */
export const THREAD_OPENED = 0;
export const CHECKPOINT_FAILED = -1;
export const THREAD_CLOSED = -2;

export interface WriteResult {
  id: number;
  error?: string;
}

/**
 * The SQLite audit writer thread: better-sqlite3 is synchronous, so commits run here, on a
 * connection of this thread's own (WAL lets it write while the request thread reads), and the
 * event loop serving requests never waits for a disk flush. With synchronous=FULL (the default)
 * a commit is on disk before its answers are released, not only in the OS cache; NORMAL keeps it
 * through a process crash but not a power loss (EDS_AUDIT_SQLITE_SYNCHRONOUS).
 */
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import type { AuditRecord } from '../store/auditRows.js';
import { sqliteAuditWriter } from '../store/sqliteAuditWriter.js';

export interface WriterThreadData {
  path: string;
  busyTimeoutMs: number;
  synchronous: 'full' | 'normal';
}

export interface WriteRequest {
  id: number;
  records: AuditRecord[];
}

/** id 0 announces that the connection is open (or could not be opened: `error`). */
export interface WriteResult {
  id: number;
  error?: string;
}

const { path, busyTimeoutMs, synchronous } = workerData as WriterThreadData;
const sqlite = new SQLite(path);
sqlite.pragma(`busy_timeout = ${Math.floor(busyTimeoutMs)}`);
sqlite.pragma('journal_mode = WAL');
sqlite.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
// Each multi-row insert inside a group's transaction keeps a statement journal (to undo just that
// statement); in a temporary file that was a write system call per touched page, over a third of
// the thread's time in a profile of list pages. In memory it is bounded by one statement's pages.
sqlite.pragma('temp_store = MEMORY');
// better-sqlite3 builds SQLite with a 16 MB page cache per connection; this one fills it with
// the audit table's and indexes' pages within minutes of load and holds it for the life of the
// process. Its inserts touch the right edge of two indexes and one leaf of the third per row, so
// SQLite's own default of 2 MB keeps what they reuse.
sqlite.pragma('cache_size = -2000');
parentPort!.postMessage({ id: 0 } satisfies WriteResult);

let write: ((records: readonly AuditRecord[]) => void) | undefined;

parentPort!.on('message', ({ id, records }: WriteRequest) => {
  try {
    write ??= sqliteAuditWriter(sqlite);
    write(records);
    parentPort!.postMessage({ id } satisfies WriteResult);
  } catch (error) {
    // Prepared again on the next group: the schema may have changed under the statements.
    write = undefined;
    parentPort!.postMessage({ id, error: (error as Error).message } satisfies WriteResult);
  }
});

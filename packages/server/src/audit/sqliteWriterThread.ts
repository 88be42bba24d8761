/**
 * The SQLite audit writer thread: better-sqlite3 is synchronous, so commits run here, on a
 * connection of this thread's own (WAL lets it write while the request thread reads), and the
 * event loop serving requests never waits for a disk flush. With synchronous=FULL (the default)
 * a commit is on disk before its answers are released, not only in the OS cache; NORMAL keeps it
 * through a process crash but not a power loss (EDS_AUDIT_SQLITE_SYNCHRONOUS).
 *
 * The thread also keeps the request thread's connection from copying the write-ahead log back
 * into the database file. SQLite does that inside whichever COMMIT pushes the log past 1,000
 * pages; on the request thread's connection the answer being sent, and every one queued behind
 * it, waited for that copy and its fsync (COMMIT calls of tens of milliseconds, and single
 * answers of hundreds on a busy disk, in `npm run bench -- --stalls`). So that connection's
 * automatic checkpoints are off. This thread's own commits keep theirs, which copy the log a
 * thousand pages at a time, and every interval, between groups, it runs a PASSIVE checkpoint for
 * what is left (what the request thread's connection wrote, the tail of the log): it never waits
 * for readers or writers. Under load that took 1.2 ms a second (at most 3.9), against a thread of
 * its own that held 11 MB; with this connection's automatic checkpoints off as well, the log
 * grew to 19,000 pages a second and each checkpoint took 13 ms, and the 99th percentile of
 * encounter detail went from 3 to 9 ms. Closing runs one last checkpoint.
 */
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import type { AuditRecord } from '../store/auditRows.js';
import { sqliteAuditWriter } from '../store/sqliteAuditWriter.js';
import {
  CHECKPOINT_FAILED,
  type CloseRequest,
  THREAD_CLOSED,
  THREAD_OPENED,
  type WriteRequest,
  type WriteResult,
  type WriterThreadData,
} from './writerThreadProtocol.js';

const { path, busyTimeoutMs, synchronous, checkpointIntervalMs } = workerData as WriterThreadData;
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
parentPort!.postMessage({ id: THREAD_OPENED } satisfies WriteResult);

function checkpoint(): void {
  try {
    sqlite.pragma('wal_checkpoint(PASSIVE)');
  } catch (error) {
    parentPort!.postMessage({ id: CHECKPOINT_FAILED, error: (error as Error).message } satisfies WriteResult);
  }
}
const checkpoints = checkpointIntervalMs > 0 ? setInterval(checkpoint, checkpointIntervalMs) : undefined;

let write: ((records: readonly AuditRecord[]) => void) | undefined;

parentPort!.on('message', (request: WriteRequest | CloseRequest) => {
  if ('close' in request) {
    if (checkpoints !== undefined) {
      clearInterval(checkpoints);
      checkpoint();
    }
    sqlite.close();
    parentPort!.postMessage({ id: THREAD_CLOSED } satisfies WriteResult);
    return;
  }
  const { id, records } = request;
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

/**
 * The API's hot reads on SQLite share one read transaction per turn of the event loop, on a
 * read-only connection of their own.
 *
 * Every statement outside a transaction is a read transaction of its own, and in WAL mode each
 * one takes and releases a read mark on the shared-memory index and checks the file's size: three
 * system calls, about 7.5 µs on the benchmark VM, where an encounter detail's read is 2 µs inside
 * a transaction (docs/benchmarks.md). Within one transaction only the first statement pays.
 *
 * The requests answered in one turn are concurrent, so reading them from one snapshot changes
 * nothing a client can tell. The snapshot ends when the turn's I/O callbacks are done
 * (setImmediate): a commit by another process or thread is seen from the next turn on. A write
 * of this process must be seen by its next read at once, so every statement Kysely runs on the
 * store's connection ends the snapshot (connection.ts), as does a write made outside Kysely
 * (`endReadSnapshot`).
 */
import SQLite from 'better-sqlite3';

export class ReadSnapshots {
  private readonly connection: SQLite.Database;
  private readonly begin: SQLite.Statement;
  private readonly commit: SQLite.Statement;
  private endScheduled = false;

  constructor(path: string) {
    this.connection = new SQLite(path, { readonly: true });
    this.connection.pragma('busy_timeout = 5000');
    this.begin = this.connection.prepare('BEGIN');
    this.commit = this.connection.prepare('COMMIT');
  }

  prepare(sql: string): SQLite.Statement {
    return this.connection.prepare(sql);
  }

  /**
   * Opens this turn's snapshot unless one is open. Asked of SQLite, not remembered: an error that
   * makes SQLite roll a transaction back ends the snapshot too, and the next read begins another.
   */
  enter(): void {
    if (this.connection.inTransaction) return;
    this.begin.run();
    if (this.endScheduled) return;
    this.endScheduled = true;
    setImmediate(this.end);
  }

  /** Ends the snapshot: the next read begins a new one. */
  readonly end = (): void => {
    this.endScheduled = false;
    if (!this.connection.open || !this.connection.inTransaction) return;
    try {
      this.commit.run();
    } catch {
      // Ending a read transaction only gives up its snapshot; ROLLBACK does the same.
      this.connection.exec('ROLLBACK');
    }
  };

  close(): void {
    this.end();
    this.connection.close();
  }
}

/**
 * The request thread's side of the SQLite audit writer thread: hands groups over, resolves each
 * when the thread has committed it. A thread that dies fails what it held and is started again
 * for the next group. Given the request thread's connection, a running thread also takes over
 * its WAL checkpoints (see sqliteWriterThread.ts); while no thread runs, and once closed, the
 * connection checkpoints the ordinary way again.
 */
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';
import { LinkedRecords } from '../linkedRecords.js';
import type { Logger } from '../logger.js';
import type { AuditRecord } from '../store/auditRows.js';
import type { AuditWriter } from './auditWriter.js';
import { withSmallYoungGeneration } from './smallYoungGeneration.js';
import {
  CHECKPOINT_FAILED,
  type CloseRequest,
  THREAD_CLOSED,
  THREAD_OPENED,
  type WriteRequest,
  type WriteResult,
  type WriterThreadData,
} from './writerThreadProtocol.js';

/** The connection whose automatic WAL checkpoints the thread takes over, and how often it runs one. */
export interface CheckpointTakeover {
  connection: SQLite.Database;
  intervalMs: number;
}

interface Waiting {
  id: number;
  /** The thread it was handed to: one that dies fails its own groups, not a later thread's. */
  worker: Worker;
  resolve(): void;
  reject(error: Error): void;
  older: Waiting | undefined;
  newer: Waiting | undefined;
}

export class SqliteThreadWriter implements AuditWriter {
  private worker: Worker | undefined;
  private started: Promise<void> | undefined;
  private nextId = 1;
  /**
   * Groups handed over and not yet answered, oldest first: the thread answers them in the order
   * it was given them. Not a Map by ID: its rebuilt tables were a sixth of what the request thread
   * promoted to the old space under load.
   */
  private readonly waiting = new LinkedRecords<Waiting>();
  private closing = false;

  constructor(
    private readonly path: string,
    private readonly busyTimeoutMs: number,
    private readonly logger: Logger,
    private readonly synchronous: 'full' | 'normal' = 'full',
    private readonly checkpoints?: CheckpointTakeover,
  ) {}

  /**
   * Starts the thread and resolves once its connection is open: loading it can take seconds on
   * a busy machine, which must not count against the first answers' commit timeout.
   */
  start(): Promise<void> {
    this.thread();
    return this.started!;
  }

  write(records: readonly AuditRecord[]): Promise<void> {
    if (this.closing) return Promise.reject(new Error('audit writer closed'));
    const worker = this.thread();
    const id = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      this.waiting.append({ id, worker, resolve, reject, older: undefined, newer: undefined });
      worker.ref();
      worker.postMessage({ id, records } satisfies WriteRequest);
    });
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = startThread({
      path: this.path,
      busyTimeoutMs: this.busyTimeoutMs,
      synchronous: this.synchronous,
      checkpointIntervalMs: this.checkpoints?.intervalMs ?? 0,
    });
    let opened: (error?: string) => void = () => {};
    this.started = new Promise<void>((resolve, reject) => {
      opened = (error) => (error === undefined ? resolve() : reject(new Error(error)));
    });
    this.started.catch(() => {});
    worker.on('message', ({ id, error }: WriteResult) => {
      if (id === THREAD_OPENED) {
        if (error === undefined) this.checkpoints?.connection.pragma('wal_autocheckpoint = 0');
        this.releaseIfIdle(worker);
        return opened(error);
      }
      if (id === CHECKPOINT_FAILED) return this.logger.warn({ error }, 'WAL checkpoint failed');
      if (id === THREAD_CLOSED) return; // awaited by close()
      const waiting = this.answered(id);
      this.releaseIfIdle(worker);
      if (error === undefined) waiting?.resolve();
      else waiting?.reject(new Error(error));
    });
    const fail = (error: Error) => {
      opened(error.message);
      if (this.worker === worker) this.worker = undefined;
      for (const waiting of this.handedTo(worker)) waiting.reject(error);
    };
    worker.on('error', (error) => {
      this.logger.error({ err: { message: error.message } }, 'audit writer thread failed');
      fail(error);
    });
    worker.on('exit', (code) => {
      fail(new Error(`audit writer thread exited (${code})`));
      // Until another thread runs them, the connection checkpoints the ordinary way.
      if (!this.closing && this.worker === undefined) this.handBackCheckpoints();
    });
    this.worker = worker;
    return worker;
  }

  /** Takes the answered group out of those waiting: the oldest, as the thread answers in order. */
  private answered(id: number): Waiting | undefined {
    let waiting = this.waiting.oldest;
    while (waiting !== undefined && waiting.id !== id) waiting = waiting.newer;
    if (waiting !== undefined) this.waiting.remove(waiting);
    return waiting;
  }

  /**
   * Takes every group handed to `worker` out of those waiting. A thread that fails is reported
   * twice ('error', then 'exit'), and a group written in between goes to the next thread.
   */
  private handedTo(worker: Worker): Waiting[] {
    const taken: Waiting[] = [];
    for (let waiting = this.waiting.oldest; waiting !== undefined; ) {
      const newer: Waiting | undefined = waiting.newer;
      if (waiting.worker === worker) {
        this.waiting.remove(waiting);
        taken.push(waiting);
      }
      waiting = newer;
    }
    return taken;
  }

  /** Held by the event loop while it opens and while groups are in it, not while idle. */
  private releaseIfIdle(worker: Worker): void {
    if (this.waiting.oldest === undefined && !this.closing) worker.unref();
  }

  private handBackCheckpoints(): void {
    if (this.checkpoints?.connection.open) this.checkpoints.connection.pragma('wal_autocheckpoint = 1000');
  }

  async close(): Promise<void> {
    this.closing = true;
    const worker = this.worker;
    this.worker = undefined;
    if (worker !== undefined && this.checkpoints !== undefined) {
      // The last checkpoint, then the thread's connection closed, before the thread goes; the
      // thread is held meanwhile, or a process with nothing else left to do would end first.
      const closed = new Promise<void>((resolve) => {
        worker.on('message', ({ id }: WriteResult) => id === THREAD_CLOSED && resolve());
        worker.once('exit', () => resolve());
      });
      worker.ref();
      worker.postMessage({ close: true } satisfies CloseRequest);
      await closed;
    }
    await worker?.terminate();
    // Whatever the connection writes from now on is checkpointed the ordinary way.
    this.handBackCheckpoints();
  }
}

/**
 * From the compiled build the thread runs its .js file; from the TypeScript sources (development,
 * tests) it first registers tsx in the new thread, as bin/eds.js does for the main one.
 */
function startThread(data: WriterThreadData): Worker {
  const fromSources = import.meta.url.endsWith('.ts');
  const entry = new URL(fromSources ? './sqliteWriterThread.ts' : './sqliteWriterThread.js', import.meta.url);
  if (!fromSources) return withSmallYoungGeneration(() => new Worker(entry, { workerData: data }));
  const tsx = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry.href)}); })`;
  return withSmallYoungGeneration(() => new Worker(boot, { eval: true, workerData: data }));
}

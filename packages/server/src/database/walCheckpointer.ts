/**
 * WAL checkpoints off the event loop. SQLite copies the write-ahead log back into the database
 * file (and fsyncs it) inside whichever COMMIT pushes the log past 1,000 pages: on the API's
 * connection that is an audit or last-used write, and the request being answered, and every one
 * queued behind it, waits for that copy and fsync (measured by `npm run bench -- --stalls`: COMMIT
 * calls of tens of milliseconds, and single answers of hundreds on a busy disk). So the serving
 * process turns automatic checkpoints off on its connection and a worker thread, with a
 * connection of its own, runs a PASSIVE checkpoint every interval: it never waits for readers or
 * writers, and they never wait for it. Closing runs one last checkpoint.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';

export interface WalCheckpointer {
  stop(): Promise<void>;
}

// A plain CommonJS body evaluated in the worker: the same code under tsx (development) and in
// the compiled output, with no worker file to locate beside this module.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('busy_timeout = 1000');
const checkpoint = () => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message) });
  }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.postMessage({ stopped: true });
});
`;

export function startWalCheckpointer(
  sqlite: SQLite.Database,
  intervalMs: number,
  onError: (message: string) => void,
): WalCheckpointer | undefined {
  if (sqlite.memory) return undefined;
  sqlite.pragma('wal_autocheckpoint = 0');
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { path: sqlite.name, intervalMs, driver },
  });
  worker.unref();
  const stopped = new Promise<void>((resolve) => {
    worker.on('message', (message: { error?: string; stopped?: boolean }) => {
      if (message.error) onError(message.error);
      if (message.stopped) resolve();
    });
    worker.on('error', (error) => {
      onError(error.message);
      resolve();
    });
    worker.on('exit', () => resolve());
  });
  return {
    async stop() {
      worker.postMessage('stop');
      await stopped;
      await worker.terminate();
      // Whatever this connection writes from now on is checkpointed the ordinary way.
      if (sqlite.open) sqlite.pragma('wal_autocheckpoint = 1000');
    },
  };
}

/** The audit writer the configuration's store calls for. */
import type { Config } from '../config.js';
import type { Store } from '../database/connection.js';
import { openStore } from '../database/connection.js';
import type { Logger } from '../logger.js';
import { AuditIndexMerger } from './auditIndexMerger.js';
import { type AuditWriter, KyselyAuditWriter } from './auditWriter.js';
import { SqliteThreadWriter } from './sqliteThreadWriter.js';

/** How often the serving process checkpoints SQLite's WAL, off the event loop. */
const WAL_CHECKPOINT_INTERVAL_MS = 1000;

export function createAuditWriter(config: Config, store: Store, logger: Logger): AuditWriter {
  const database = config.database;
  if (database.dialect === 'sqlite') {
    if (database.path === ':memory:') return new KyselyAuditWriter(store);
    return new SqliteThreadWriter(
      database.path,
      config.audit.commitTimeoutMs,
      logger,
      config.audit.sqliteSynchronous,
      store.sqlite && { connection: store.sqlite, intervalMs: WAL_CHECKPOINT_INTERVAL_MS },
    );
  }
  // One connection of its own: audit commits never queue behind reads for a pool connection,
  // and a statement that cannot finish in time fails instead of holding responses.
  const own = openStore(
    { ...database, poolSize: 1, statementTimeoutMs: config.audit.commitTimeoutMs },
    { applicationName: 'eds audit writer' },
  );
  const intervalMs = config.audit.indexMergeIntervalMs;
  if (intervalMs === 0) return new KyselyAuditWriter(own, () => own.close());
  // Another connection of its own, without a statement timeout: a merge is background work,
  // and what one cut short had merged stays merged.
  const merger = new AuditIndexMerger(
    openStore(
      { ...database, poolSize: 1, statementTimeoutMs: 0 },
      { applicationName: 'eds audit index merger' },
    ),
    logger,
    intervalMs,
  );
  merger.start();
  return new KyselyAuditWriter(own, async () => {
    await merger.close();
    await own.close();
  });
}

/**
 * What the API keeps for the life of a process beyond the shared services: the key cache and
 * its cross-process invalidation, the audit queue, the last-used tracker, and (SQLite) the WAL
 * checkpointer that keeps checkpoints off the event loop.
 */
import { AuditQueue } from '../audit/auditQueue.js';
import { KeyCache } from '../auth/keyCache.js';
import { LastUsedTracker } from '../auth/lastUsed.js';
import type { VerifyDeps } from '../auth/verifyApiKey.js';
import type { Services } from '../services.js';
import { watchAuthChanges } from '../store/authChanges.js';
import type { CommitWatch } from '../store/commitWatch.js';
import { startWalCheckpointer } from '../store/walCheckpointer.js';

export interface ApiContext {
  readonly services: Services;
  readonly verifyDeps: VerifyDeps;
  readonly keyCache: KeyCache;
  readonly audit: AuditQueue;
  readonly lastUsed: LastUsedTracker;
  close(): Promise<void>;
}

/** How often the serving process checkpoints SQLite's WAL, off the event loop. */
const WAL_CHECKPOINT_INTERVAL_MS = 1000;

export function createApiContext(services: Services): ApiContext {
  const { config, store, logger, metrics } = services;
  const keyCache = new KeyCache(config.apiKeys.cacheTtlMs);
  const audit = new AuditQueue({
    store,
    // SQLite writes block the event loop, so small transactions; PostgreSQL's do not, and each
    // of its commits waits for a disk flush, so large ones.
    sliceSize: store.dialect === 'sqlite' ? 100 : 5000,
    flushIntervalMs: config.audit.flushIntervalMs,
    batchSize: config.audit.batchSize,
    logger,
    metrics,
  });
  const lastUsed = new LastUsedTracker(store.db, logger);
  const pgUrl = config.database.dialect === 'postgres' ? config.database.url : undefined;
  const watch: CommitWatch = watchAuthChanges(store, pgUrl, () => keyCache.clear());
  const checkpointer =
    store.sqlite &&
    startWalCheckpointer(store.sqlite, WAL_CHECKPOINT_INTERVAL_MS, (message) =>
      logger.warn({ error: message }, 'WAL checkpoint failed'),
    );
  return {
    services,
    keyCache,
    audit,
    lastUsed,
    verifyDeps: {
      config,
      store,
      digestKey: services.digestKey,
      cache: keyCache,
      metrics,
      clock: services.clock,
    },
    async close() {
      await watch.stop();
      await lastUsed.close();
      await audit.close();
      await checkpointer?.stop();
    },
  };
}

/**
 * What the API keeps for the life of a process beyond the shared services: the key cache and
 * its cross-process invalidation, the audit writer with its group commit and the queue of folded
 * refusals (on SQLite its thread also keeps WAL checkpoints off the event loop), the last-used
 * tracker and the rate limits.
 */
import { AuditQueue } from '../audit/auditQueue.js';
import { createAuditWriter } from '../audit/createAuditWriter.js';
import { GroupCommit } from '../audit/groupCommit.js';
import { KeyCache } from '../auth/keyCache.js';
import { LastUsedTracker } from '../auth/lastUsed.js';
import type { VerifyDeps } from '../auth/verifyApiKey.js';
import type { CommitWatch } from '../database/commitWatch.js';
import { readThroughSnapshots } from '../database/connection.js';
import { Buckets } from '../rateLimit/buckets.js';
import { RequestLimits } from '../rateLimit/requestLimits.js';
import type { Services } from '../services.js';
import { watchAuthChanges } from '../store/authChanges.js';

export interface ApiContext {
  readonly services: Services;
  readonly verifyDeps: VerifyDeps;
  readonly keyCache: KeyCache;
  /** Unidentified refusals, folded and written after their answers. */
  readonly audit: AuditQueue;
  /** Keyed requests' records, committed before their answers. */
  readonly durableAudit: GroupCommit;
  readonly lastUsed: LastUsedTracker;
  readonly limits: RequestLimits;
  /** Resolves once the audit writer can take records; the API listens only after it. */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export function createApiContext(services: Services): ApiContext {
  const { config, store, logger, metrics } = services;
  // The routes' reads share a read transaction per turn; this process writes what they read
  // only through Kysely (readSnapshot.ts).
  readThroughSnapshots(store);
  const keyCache = new KeyCache(config.apiKeys.cacheTtlMs);
  const writer = createAuditWriter(config, store, logger);
  const durableAudit = new GroupCommit({
    writer,
    maxRecords: config.audit.groupMaxRecords,
    timeoutMs: config.audit.commitTimeoutMs,
    logger,
    metrics,
  });
  const audit = new AuditQueue({
    writer,
    sliceSize: 5000,
    flushIntervalMs: config.audit.flushIntervalMs,
    batchSize: config.audit.batchSize,
    logger,
    metrics,
  });
  metrics.sources.auditQueueDepth = () => audit.depth;
  const lastUsed = new LastUsedTracker(store.db, logger);
  const pgUrl = config.database.dialect === 'postgres' ? config.database.url : undefined;
  const buckets = new Buckets(config.rateLimits, logger, metrics);
  const watch: CommitWatch = watchAuthChanges(store, pgUrl, () => keyCache.clear());
  return {
    services,
    keyCache,
    audit,
    durableAudit,
    lastUsed,
    limits: new RequestLimits(config.rateLimits, buckets, metrics),
    verifyDeps: {
      config,
      store,
      digestKey: services.digestKey,
      cache: keyCache,
      metrics,
      clock: services.clock,
    },
    async ready() {
      await writer.start?.();
    },
    async close() {
      await watch.stop();
      await lastUsed.close();
      await audit.close();
      await buckets.close();
      await durableAudit.close();
      await writer.close();
    },
  };
}

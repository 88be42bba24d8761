/**
 * Configuration: read from the environment once at start-up against the settings schema
 * (config/settings.ts), and handed to every component as a typed object. Nothing else in the
 * code reads `process.env`.
 */
import { dirname, join, resolve } from 'node:path';
import type { Static } from 'typebox';
import { type Env, readEnvironment, sqlitePath } from './config/environment.js';
import { loadSecrets, SECRET_NAMES } from './config/secretsFile.js';
import { SETTINGS } from './config/settings.js';
import type { Config, DatabaseConfig, StorageConfig } from './config/types.js';
import { parseDeprecations } from './deprecations.js';

export type { Config, DatabaseConfig, RateLimitConfig, StorageConfig } from './config/types.js';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Settings = Static<typeof SETTINGS>;

export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): Config {
  const reading = readEnvironment(SETTINGS, env);
  const s = reading.values as Settings;
  const problems = reading.problems;
  const fail = (name: string, message: string) => problems.push(`${name} ${message}`);

  const production = s.NODE_ENV === 'production';
  const database = databaseOf(s, cwd);
  const dataDir = resolve(
    cwd,
    s.EDS_DATA_DIR ?? (database.dialect === 'sqlite' ? dirname(database.path) : './data'),
  );
  const urlHost = s.EDS_HOST === '0.0.0.0' || s.EDS_HOST === '::' ? '127.0.0.1' : s.EDS_HOST;

  const baseSecrets = loadSecrets(
    { keyDigest: s.EDS_KEY_DIGEST_SECRET, mediaSigning: s.EDS_MEDIA_SIGNING_SECRET },
    production,
    dataDir,
    fail,
  );
  // Rotation of the key digest secret: equal to the current one would be a rotation that is not.
  let keyDigestPrevious = s.EDS_KEY_DIGEST_SECRET_PREVIOUS;
  if (keyDigestPrevious !== undefined && keyDigestPrevious === baseSecrets.keyDigest) {
    fail(
      'EDS_KEY_DIGEST_SECRET_PREVIOUS',
      `equals ${SECRET_NAMES.keyDigest}; set it to the former secret, or unset it when no rotation is under way`,
    );
    keyDigestPrevious = undefined;
  }

  const deprecations = s.EDS_DEPRECATIONS === undefined ? undefined : parseDeprecations(s.EDS_DEPRECATIONS);
  for (const problem of deprecations?.problems ?? []) fail('EDS_DEPRECATIONS', problem);

  const config: Config = {
    production,
    deploymentMode: s.EDS_DEPLOYMENT_MODE as Config['deploymentMode'],
    database,
    dataDir,
    host: s.EDS_HOST,
    port: s.EDS_PORT,
    mediaPort: s.EDS_MEDIA_PORT,
    adminPort: s.EDS_ADMIN_PORT,
    publicBaseUrl: trimSlash(s.EDS_PUBLIC_BASE_URL ?? `http://${urlHost}:${s.EDS_PORT}`),
    mediaBaseUrl: trimSlash(s.EDS_MEDIA_BASE_URL ?? `http://${urlHost}:${s.EDS_MEDIA_PORT}`),
    logLevel: s.EDS_LOG_LEVEL,
    gcPauseMetrics: s.EDS_METRICS_GC_PAUSES,
    secrets: { ...baseSecrets, keyDigestPrevious },
    apiKeys: { enabled: s.EDS_API_KEYS_ENABLED, cacheTtlMs: s.EDS_KEY_CACHE_TTL_MS },
    media: {
      linkTtlSeconds: s.EDS_MEDIA_LINK_TTL_SECONDS,
      storageTimeoutMs: s.EDS_STORAGE_TIMEOUT_MS,
      storage: storageOf(s, dataDir, cwd),
    },
    audit: {
      flushIntervalMs: s.EDS_AUDIT_FLUSH_MS,
      batchSize: s.EDS_AUDIT_BATCH_SIZE,
      commitTimeoutMs: s.EDS_AUDIT_COMMIT_TIMEOUT_MS,
      groupMaxRecords: s.EDS_AUDIT_GROUP_MAX,
      sqliteSynchronous: s.EDS_AUDIT_SQLITE_SYNCHRONOUS as Config['audit']['sqliteSynchronous'],
      indexMergeIntervalMs: s.EDS_AUDIT_INDEX_MERGE_MS,
    },
    http: {
      requestTimeoutMs: s.EDS_REQUEST_TIMEOUT_MS,
      maxHeaderBytes: s.EDS_MAX_HEADER_BYTES,
      shutdownGraceMs: s.EDS_SHUTDOWN_GRACE_MS,
      keepAliveTimeoutMs: s.EDS_KEEP_ALIVE_TIMEOUT_MS,
      maxConnections: s.EDS_MAX_CONNECTIONS,
    },
    webhooks: {
      enabled: s.EDS_WEBHOOKS_ENABLED,
      allowPrivateNetworks: s.EDS_WEBHOOK_ALLOW_PRIVATE_NETWORKS,
      allowHttp: s.EDS_WEBHOOK_ALLOW_HTTP ?? !production,
      headerPrefix: s.EDS_WEBHOOK_HEADER_PREFIX,
      retryScheduleSeconds: s.EDS_WEBHOOK_RETRY_SCHEDULE,
      jitterRatio: s.EDS_WEBHOOK_JITTER,
      attemptTimeoutMs: s.EDS_WEBHOOK_TIMEOUT_MS,
      concurrency: s.EDS_WEBHOOK_CONCURRENCY,
      perEndpointConcurrency: s.EDS_WEBHOOK_ENDPOINT_CONCURRENCY,
      leaseMs: s.EDS_WEBHOOK_LEASE_MS,
      pollIntervalMs: s.EDS_WEBHOOK_POLL_MS,
      pauseAfterMs: s.EDS_WEBHOOK_PAUSE_AFTER,
      proxyUrl: s.EDS_WEBHOOK_PROXY_URL,
    },
    // Rate limits and the client address (decisions.md, Rate limits).
    rateLimits: {
      perKey: s.EDS_RATE_LIMIT_PER_KEY,
      burst: s.EDS_RATE_LIMIT_BURST,
      unauthenticated: s.EDS_RATE_LIMIT_UNAUTHENTICATED,
      redisUrl: s.EDS_REDIS_URL,
      redisCommandTimeoutMs: s.EDS_REDIS_COMMAND_TIMEOUT_MS,
      holdRefusalMaxMs: s.EDS_RATE_LIMIT_HOLD_MS,
    },
    trustProxy:
      s.EDS_TRUST_PROXY === undefined ? [] : s.EDS_TRUST_PROXY.split(',').map((part) => part.trim()),
    deprecations: deprecations?.value ?? {},
  };
  if (problems.length > 0) {
    throw new ConfigError(`Invalid configuration:\n- ${problems.join('\n- ')}`);
  }
  return config;
}

function databaseOf(s: Settings, cwd: string): DatabaseConfig {
  const raw = s.EDS_DATABASE_URL;
  if (/^postgres(ql)?:\/\//.test(raw)) {
    return {
      dialect: 'postgres',
      url: raw,
      poolSize: s.EDS_DB_POOL_SIZE,
      statementTimeoutMs: s.EDS_DB_STATEMENT_TIMEOUT_MS,
    };
  }
  const path = sqlitePath(raw);
  return { dialect: 'sqlite', path: path === ':memory:' ? path : resolve(cwd, path) };
}

function storageOf(s: Settings, dataDir: string, cwd: string): StorageConfig {
  if (s.EDS_STORAGE_DRIVER === 'local') {
    return { driver: 'local', dir: s.EDS_MEDIA_DIR ? resolve(cwd, s.EDS_MEDIA_DIR) : join(dataDir, 'media') };
  }
  return {
    driver: 's3',
    bucket: s.EDS_S3_BUCKET ?? '',
    region: s.EDS_S3_REGION,
    endpoint: s.EDS_S3_ENDPOINT,
    forcePathStyle: s.EDS_S3_FORCE_PATH_STYLE,
    accessKeyId: s.EDS_S3_ACCESS_KEY_ID,
    secretAccessKey: s.EDS_S3_SECRET_ACCESS_KEY,
    prefix: s.EDS_S3_PREFIX,
  };
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

/** The typed configuration every component receives (config.ts builds it from the settings). */
import type { Deprecations } from '../deprecations.js';

export type DatabaseConfig =
  | { readonly dialect: 'sqlite'; readonly path: string }
  | {
      readonly dialect: 'postgres';
      readonly url: string;
      readonly poolSize: number;
      readonly statementTimeoutMs: number;
    };

export type StorageConfig =
  | { readonly driver: 'local'; readonly dir: string }
  | {
      readonly driver: 's3';
      readonly bucket: string;
      readonly region: string;
      readonly endpoint: string | undefined;
      readonly forcePathStyle: boolean;
      readonly accessKeyId: string | undefined;
      readonly secretAccessKey: string | undefined;
      readonly prefix: string;
    };

export interface Config {
  readonly production: boolean;
  /** `live` refuses `eds_test_` tokens; `sandbox` accepts both. */
  readonly deploymentMode: 'live' | 'sandbox';
  readonly database: DatabaseConfig;
  /** Folder for files the deployment keeps beside its database (dev secrets, media). */
  readonly dataDir: string;
  readonly host: string;
  readonly port: number;
  readonly mediaPort: number;
  /** Prometheus metrics and nothing else; not listening unless set. */
  readonly adminPort: number | undefined;
  readonly publicBaseUrl: string;
  readonly mediaBaseUrl: string;
  readonly logLevel: string;
  /** Whether the metrics include every garbage-collection pause (an observer Node.js feeds). */
  readonly gcPauseMetrics: boolean;
  readonly secrets: {
    readonly keyDigest: string;
    /** The former digest secret while keys are moved to the current one (digest-secret rotation). */
    readonly keyDigestPrevious: string | undefined;
    readonly mediaSigning: string;
    /** Where the secrets came from; printed by `eds` so an operator knows. */
    readonly source: 'environment' | 'generated-file';
  };
  readonly apiKeys: {
    readonly enabled: boolean;
    /** Upper bound on how long a cached key verification is trusted (revocation latency). */
    readonly cacheTtlMs: number;
  };
  readonly media: {
    readonly linkTtlSeconds: number;
    readonly storageTimeoutMs: number;
    readonly storage: StorageConfig;
  };
  readonly audit: {
    readonly flushIntervalMs: number;
    readonly batchSize: number;
    /** Longest a response waits for its audit record's commit before it becomes a 503. */
    readonly commitTimeoutMs: number;
    /** Most records in one group commit. */
    readonly groupMaxRecords: number;
    /** SQLite audit commits: `full` survives power loss, `normal` survives a process crash. */
    readonly sqliteSynchronous: 'full' | 'normal';
    /** PostgreSQL: how often the audit per-patient index's pending list is merged; 0 = never. */
    readonly indexMergeIntervalMs: number;
  };
  readonly http: {
    readonly requestTimeoutMs: number;
    readonly maxHeaderBytes: number;
    readonly shutdownGraceMs: number;
    /** An idle keep-alive connection is closed after this long. */
    readonly keepAliveTimeoutMs: number;
    /** Most connections open at once over every port; the longest-idle is closed to admit another. */
    readonly maxConnections: number;
  };
  readonly webhooks: {
    readonly enabled: boolean;
    readonly allowPrivateNetworks: boolean;
    readonly allowHttp: boolean;
    readonly headerPrefix: string;
    /** Delays in seconds before attempts 2..n. */
    readonly retryScheduleSeconds: readonly number[];
    readonly jitterRatio: number;
    readonly attemptTimeoutMs: number;
    readonly concurrency: number;
    readonly perEndpointConcurrency: number;
    readonly leaseMs: number;
    readonly pollIntervalMs: number;
    /** An endpoint whose attempts have all failed for this long is paused. */
    readonly pauseAfterMs: number;
    /** Every delivery goes through this HTTP CONNECT forward proxy (it may carry credentials). */
    readonly proxyUrl: string | undefined;
  };
  readonly rateLimits: RateLimitConfig;
  /** Proxies (addresses or CIDRs) whose X-Forwarded-For is believed; empty: the socket's address. */
  readonly trustProxy: readonly string[];
  /** Routes announced for retirement, by operation ID (`EDS_DEPRECATIONS`). */
  readonly deprecations: Deprecations;
}

/** decisions.md, Rate limits. A rate of 0 turns that limit off. */
export interface RateLimitConfig {
  /** Requests a second per API key (an organization may have its own). */
  readonly perKey: number;
  /** Bucket size for a key at the deployment's rate. */
  readonly burst: number;
  /** Requests a second per client address for requests that identify no key (burst 2×). */
  readonly unauthenticated: number;
  /** Buckets shared by every API process when set; otherwise each process limits alone. */
  readonly redisUrl: string | undefined;
  /** A Redis answer slower than this is a failure: the request is limited by this process alone. */
  readonly redisCommandTimeoutMs: number;
  /**
   * Longest a 429 is held before it is sent: until the request could have succeeded, at most
   * this (0: at once). A client retrying without waiting is paced instead of spinning.
   */
  readonly holdRefusalMaxMs: number;
}

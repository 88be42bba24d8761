/**
 * Configuration: read from the environment once at start-up, validated, and handed to every
 * component as a typed object. Nothing else in the code reads `process.env`.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { type Deprecations, parseDeprecations } from './deprecations.js';
import { makePrivateDir, PRIVATE_FILE_MODE } from './privateFiles.js';

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

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Readonly<Record<string, string | undefined>>;

const DEFAULT_RETRY_SCHEDULE = [5, 300, 1800, 7200, 18000, 36000, 36000];

export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): Config {
  const read = new EnvReader(env);
  const production = env.NODE_ENV === 'production';
  const database = parseDatabase(read, cwd);
  const dataDir = resolve(
    cwd,
    read.string('EDS_DATA_DIR') ?? (database.dialect === 'sqlite' ? dirname(database.path) : './data'),
  );
  const host = read.string('EDS_HOST') ?? '127.0.0.1';
  const port = read.port('EDS_PORT', 8080);
  const mediaPort = read.port('EDS_MEDIA_PORT', 8081);
  const adminPortRaw = read.string('EDS_ADMIN_PORT');
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  const publicBaseUrl = trimSlash(read.url('EDS_PUBLIC_BASE_URL') ?? `http://${urlHost}:${port}`);
  const mediaBaseUrl = trimSlash(read.url('EDS_MEDIA_BASE_URL') ?? `http://${urlHost}:${mediaPort}`);

  const baseSecrets = loadSecrets(read, production, dataDir);
  // Rotation of the key digest secret: read after the current one, to compare.
  const secrets: Config['secrets'] = {
    ...baseSecrets,
    keyDigestPrevious: loadPreviousDigestSecret(read, baseSecrets.keyDigest),
  };
  const linkTtlSeconds = read.int('EDS_MEDIA_LINK_TTL_SECONDS', 300, 1, 3600);

  const config: Config = {
    production,
    deploymentMode: read.oneOf('EDS_DEPLOYMENT_MODE', ['live', 'sandbox'], 'live'),
    database,
    dataDir,
    host,
    port,
    mediaPort,
    adminPort: adminPortRaw === undefined ? undefined : read.port('EDS_ADMIN_PORT', 0),
    publicBaseUrl,
    mediaBaseUrl,
    logLevel: read.oneOf(
      'EDS_LOG_LEVEL',
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
      'info',
    ),
    secrets,
    apiKeys: {
      enabled: read.bool('EDS_API_KEYS_ENABLED', true),
      cacheTtlMs: read.int('EDS_KEY_CACHE_TTL_MS', 4000, 0, 5000),
    },
    media: {
      linkTtlSeconds,
      storageTimeoutMs: read.int('EDS_STORAGE_TIMEOUT_MS', 2000, 50, 60_000),
      storage: parseStorage(read, dataDir, cwd),
    },
    audit: {
      flushIntervalMs: read.int('EDS_AUDIT_FLUSH_MS', 200, 10, 600_000),
      batchSize: read.int('EDS_AUDIT_BATCH_SIZE', 500, 1, 10_000),
      commitTimeoutMs: read.int('EDS_AUDIT_COMMIT_TIMEOUT_MS', 2000, 50, 60_000),
      groupMaxRecords: read.int('EDS_AUDIT_GROUP_MAX', 2000, 1, 10_000),
      sqliteSynchronous: read.oneOf('EDS_AUDIT_SQLITE_SYNCHRONOUS', ['full', 'normal'], 'full'),
    },
    http: {
      requestTimeoutMs: read.int('EDS_REQUEST_TIMEOUT_MS', 10_000, 100, 600_000),
      maxHeaderBytes: read.int('EDS_MAX_HEADER_BYTES', 16_384, 1024, 65_536),
      shutdownGraceMs: read.int('EDS_SHUTDOWN_GRACE_MS', 10_000, 0, 120_000),
      keepAliveTimeoutMs: read.int('EDS_KEEP_ALIVE_TIMEOUT_MS', 5000, 100, 600_000),
      maxConnections: read.int('EDS_MAX_CONNECTIONS', 10_000, 16, 1_000_000),
    },
    webhooks: {
      enabled: read.bool('EDS_WEBHOOKS_ENABLED', false),
      allowPrivateNetworks: read.bool('EDS_WEBHOOK_ALLOW_PRIVATE_NETWORKS', false),
      allowHttp: read.bool('EDS_WEBHOOK_ALLOW_HTTP', !production),
      headerPrefix: read.pattern('EDS_WEBHOOK_HEADER_PREFIX', /^[A-Za-z][A-Za-z0-9]*-$/, 'Eds-'),
      retryScheduleSeconds: read.numberList('EDS_WEBHOOK_RETRY_SCHEDULE', DEFAULT_RETRY_SCHEDULE),
      jitterRatio: read.number('EDS_WEBHOOK_JITTER', 0.2, 0, 0.5),
      attemptTimeoutMs: read.int('EDS_WEBHOOK_TIMEOUT_MS', 15_000, 100, 60_000),
      concurrency: read.int('EDS_WEBHOOK_CONCURRENCY', 32, 1, 1024),
      perEndpointConcurrency: read.int('EDS_WEBHOOK_ENDPOINT_CONCURRENCY', 4, 1, 256),
      leaseMs: read.int('EDS_WEBHOOK_LEASE_MS', 10_000, 1000, 3_600_000),
      pollIntervalMs: read.int('EDS_WEBHOOK_POLL_MS', 1000, 10, 60_000),
      pauseAfterMs: read.duration('EDS_WEBHOOK_PAUSE_AFTER', 72 * 3_600_000, 1000),
      proxyUrl: parseProxyUrl(read),
    },
    // Rate limits and the client address (decisions.md, Rate limits).
    rateLimits: {
      perKey: read.int('EDS_RATE_LIMIT_PER_KEY', 100, 0, 1_000_000),
      burst: read.int('EDS_RATE_LIMIT_BURST', 200, 1, 10_000_000),
      unauthenticated: read.int('EDS_RATE_LIMIT_UNAUTHENTICATED', 50, 0, 1_000_000),
      redisUrl: parseRedisUrl(read),
      redisCommandTimeoutMs: read.int('EDS_REDIS_COMMAND_TIMEOUT_MS', 250, 1, 60_000),
      holdRefusalMaxMs: read.int('EDS_RATE_LIMIT_HOLD_MS', 1000, 0, 60_000),
    },
    trustProxy: parseTrustProxy(read),
    deprecations: readDeprecations(read),
  };
  read.throwIfInvalid();
  return config;
}

function parseDatabase(read: EnvReader, cwd: string): DatabaseConfig {
  const raw = read.string('EDS_DATABASE_URL') ?? './data/eds.sqlite';
  if (/^postgres(ql)?:\/\//.test(raw)) {
    return {
      dialect: 'postgres',
      url: raw,
      poolSize: read.int('EDS_DB_POOL_SIZE', 10, 1, 500),
      statementTimeoutMs: read.int('EDS_DB_STATEMENT_TIMEOUT_MS', 5000, 0, 600_000),
    };
  }
  const path = raw.startsWith('sqlite:') ? raw.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '') : raw;
  if (path === '' || path.includes('://')) {
    read.fail('EDS_DATABASE_URL', 'must be a file path, a sqlite: URL or a postgres:// URL');
  }
  return { dialect: 'sqlite', path: path === ':memory:' ? path : resolve(cwd, path) };
}

function parseStorage(read: EnvReader, dataDir: string, cwd: string): StorageConfig {
  const driver = read.oneOf('EDS_STORAGE_DRIVER', ['local', 's3'], 'local');
  if (driver === 'local') {
    const dir = read.string('EDS_MEDIA_DIR');
    return { driver, dir: dir ? resolve(cwd, dir) : join(dataDir, 'media') };
  }
  return {
    driver,
    bucket: read.required('EDS_S3_BUCKET'),
    region: read.string('EDS_S3_REGION') ?? 'us-east-1',
    endpoint: read.url('EDS_S3_ENDPOINT'),
    forcePathStyle: read.bool('EDS_S3_FORCE_PATH_STYLE', false),
    accessKeyId: read.string('EDS_S3_ACCESS_KEY_ID'),
    secretAccessKey: read.string('EDS_S3_SECRET_ACCESS_KEY'),
    prefix: read.string('EDS_S3_PREFIX') ?? '',
  };
}

function parseRedisUrl(read: EnvReader): string | undefined {
  const raw = read.string('EDS_REDIS_URL');
  if (raw === undefined) return undefined;
  try {
    const url = new URL(raw);
    if ((url.protocol === 'redis:' || url.protocol === 'rediss:') && url.hostname !== '') return raw;
  } catch {}
  read.fail('EDS_REDIS_URL', 'must be a redis:// or rediss:// URL with a host');
  return undefined;
}

/** `EDS_WEBHOOK_PROXY_URL` (or `_FILE`, as credentials may be in it): an http:// CONNECT proxy. */
function parseProxyUrl(read: EnvReader): string | undefined {
  const raw = read.secret('EDS_WEBHOOK_PROXY_URL');
  if (raw === undefined) return undefined;
  try {
    const url = new URL(raw);
    if (url.protocol === 'http:' && url.hostname !== '' && (url.pathname === '/' || url.pathname === '')) {
      return raw;
    }
  } catch {}
  // The value is not echoed: it may hold the proxy's password.
  read.fail('EDS_WEBHOOK_PROXY_URL', 'must be an http://[user:password@]host:port URL of a forward proxy');
  return undefined;
}

/** `EDS_TRUST_PROXY`: comma-separated addresses or CIDRs, as Fastify's trustProxy takes them. */
function parseTrustProxy(read: EnvReader): readonly string[] {
  const raw = read.string('EDS_TRUST_PROXY');
  if (raw === undefined) return [];
  const entries = raw.split(',').map((part) => part.trim());
  const bad = entries.filter((entry) => {
    const [address = '', prefix, extra] = entry.split('/');
    const family = isIP(address);
    if (family === 0 || extra !== undefined) return true;
    if (prefix === undefined) return false;
    return !/^\d{1,3}$/.test(prefix) || Number(prefix) > (family === 4 ? 32 : 128);
  });
  if (bad.length > 0) read.fail('EDS_TRUST_PROXY', 'must be a comma-separated list of IP addresses or CIDRs');
  return entries;
}

function readDeprecations(read: EnvReader): Deprecations {
  const raw = read.string('EDS_DEPRECATIONS');
  if (raw === undefined) return {};
  const { value, problems } = parseDeprecations(raw);
  for (const problem of problems) read.fail('EDS_DEPRECATIONS', problem);
  return value;
}

const SECRET_NAMES = {
  keyDigest: 'EDS_KEY_DIGEST_SECRET',
  mediaSigning: 'EDS_MEDIA_SIGNING_SECRET',
} as const;

/**
 * Secrets come from the environment (or `NAME_FILE`, the container-secrets convention). A
 * development deployment without them makes its own once and keeps them beside the database so
 * keys stay valid across restarts; production refuses to start and names what is missing.
 */
function loadSecrets(
  read: EnvReader,
  production: boolean,
  dataDir: string,
): Omit<Config['secrets'], 'keyDigestPrevious'> {
  const given = {
    keyDigest: read.secret(SECRET_NAMES.keyDigest),
    mediaSigning: read.secret(SECRET_NAMES.mediaSigning),
  };
  if (given.keyDigest && given.mediaSigning) {
    return { keyDigest: given.keyDigest, mediaSigning: given.mediaSigning, source: 'environment' };
  }
  if (production) {
    const missing = Object.entries(SECRET_NAMES)
      .filter(([key]) => !given[key as keyof typeof given])
      .map(([, name]) => name);
    read.fail(missing.join(', '), 'is required when NODE_ENV=production (set it or NAME_FILE)');
    return { keyDigest: '', mediaSigning: '', source: 'environment' };
  }
  const file = join(dataDir, 'secrets.json');
  let stored: Partial<Record<keyof typeof SECRET_NAMES, string>> = {};
  if (existsSync(file)) stored = JSON.parse(readFileSync(file, 'utf8'));
  const merged = {
    keyDigest: given.keyDigest ?? stored.keyDigest ?? randomBytes(32).toString('base64url'),
    mediaSigning: given.mediaSigning ?? stored.mediaSigning ?? randomBytes(32).toString('base64url'),
  };
  if (stored.keyDigest !== merged.keyDigest || stored.mediaSigning !== merged.mediaSigning) {
    makePrivateDir(dataDir);
    writeFileSync(file, `${JSON.stringify(merged, null, 2)}\n`, { mode: PRIVATE_FILE_MODE });
    chmodSync(file, PRIVATE_FILE_MODE);
  }
  return { ...merged, source: 'generated-file' };
}

const PREVIOUS_DIGEST_SECRET = 'EDS_KEY_DIGEST_SECRET_PREVIOUS';

/** The former key digest secret; equal to the current one would be a rotation that is not. */
function loadPreviousDigestSecret(read: EnvReader, current: string): string | undefined {
  const previous = read.secret(PREVIOUS_DIGEST_SECRET);
  if (previous !== undefined && previous === current) {
    read.fail(
      PREVIOUS_DIGEST_SECRET,
      `equals ${SECRET_NAMES.keyDigest}; set it to the former secret, or unset it when no rotation is under way`,
    );
    return undefined;
  }
  return previous;
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

/** Collects every problem so one start-up reports them all. */
class EnvReader {
  private readonly problems: string[] = [];
  constructor(private readonly env: Env) {}

  string(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  }

  required(name: string): string {
    const value = this.string(name);
    if (value === undefined) this.fail(name, 'is required');
    return value ?? '';
  }

  secret(name: string): string | undefined {
    const direct = this.string(name);
    if (direct) return direct;
    const path = this.string(`${name}_FILE`);
    if (!path) return undefined;
    try {
      const value = readFileSync(path, 'utf8').trim();
      return value === '' ? undefined : value;
    } catch {
      this.fail(`${name}_FILE`, 'names a file that cannot be read');
      return undefined;
    }
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    if (!/^-?\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      this.fail(name, `must be a whole number from ${min} to ${max}`);
      return fallback;
    }
    return Number(raw);
  }

  number(name: string, fallback: number, min: number, max: number): number {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min || value > max) {
      this.fail(name, `must be a number from ${min} to ${max}`);
      return fallback;
    }
    return value;
  }

  numberList(name: string, fallback: readonly number[]): readonly number[] {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    const values = raw.split(',').map((part) => Number(part.trim()));
    if (values.length === 0 || values.some((v) => !Number.isFinite(v) || v < 0)) {
      this.fail(name, 'must be a comma-separated list of non-negative seconds');
      return fallback;
    }
    return values;
  }

  /** A duration: whole seconds, or a number with a unit (`90s`, `30m`, `72h`, `5d`); in ms. */
  duration(name: string, fallbackMs: number, minMs: number): number {
    const raw = this.string(name);
    if (raw === undefined) return fallbackMs;
    const m = /^(\d+)(s|m|h|d)?$/.exec(raw);
    const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m?.[2] ?? 's'] ?? 1000;
    const ms = m ? Number(m[1]) * unit : Number.NaN;
    if (!Number.isSafeInteger(ms) || ms < minMs) {
      this.fail(name, `must be a duration of at least ${minMs / 1000} s, like 72h, 30m or 3600`);
      return fallbackMs;
    }
    return ms;
  }

  port(name: string, fallback: number): number {
    return this.int(name, fallback, 0, 65_535);
  }

  bool(name: string, fallback: boolean): boolean {
    const raw = this.string(name)?.toLowerCase();
    if (raw === undefined) return fallback;
    if (['true', '1', 'yes', 'on'].includes(raw)) return true;
    if (['false', '0', 'no', 'off'].includes(raw)) return false;
    this.fail(name, 'must be true or false');
    return fallback;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(raw)) {
      this.fail(name, `must be one of ${allowed.join(', ')}`);
      return fallback;
    }
    return raw as T;
  }

  pattern(name: string, re: RegExp, fallback: string): string {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    if (!re.test(raw)) this.fail(name, `must match ${re}`);
    return raw;
  }

  url(name: string): string | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    try {
      const url = new URL(raw);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
      return raw;
    } catch {
      this.fail(name, 'must be an http(s) URL');
      return undefined;
    }
  }

  fail(name: string, message: string): void {
    this.problems.push(`${name} ${message}`);
  }

  throwIfInvalid(): void {
    if (this.problems.length > 0) {
      throw new ConfigError(`Invalid configuration:\n- ${this.problems.join('\n- ')}`);
    }
  }
}

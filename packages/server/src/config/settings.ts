/**
 * Every setting the service reads from its environment, as one TypeBox schema: each property is
 * a variable, with its type and bounds, its default, what it means (the operations guide's
 * settings table is generated from these), and whether it is a secret that may be given as
 * `NAME_FILE`. config/environment.ts reads and checks the environment against it once.
 */
import Type, { type TSchema } from 'typebox';

/** How the environment's text becomes the schema's value, beyond the plain types. */
export type TextForm = 'duration' | 'comma-list';

/** The keywords a setting carries besides JSON Schema's own. */
export interface SettingKeywords {
  description: string;
  /** The default in words, where it is derived from other settings or the run mode. */
  defaultText?: string;
  /** A secret: never echoed; printed as "secret" in the settings table. */
  secret?: boolean;
  /** May be given as `NAME_FILE`, a path to a file holding the value (container secrets). */
  fileForm?: boolean;
  /** Read only when another setting's text matches (the others of a driver are ignored). */
  appliesWhen?: { setting: string; matches: string; label: string };
  /** Must be given whenever it applies. */
  requiredWhenApplies?: boolean;
  textForm?: TextForm;
}

export type Setting = TSchema & SettingKeywords & Record<string, unknown>;

const int = (minimum: number, maximum: number, fallback: number | undefined, keywords: SettingKeywords) =>
  Type.Integer({ minimum, maximum, ...(fallback === undefined ? {} : { default: fallback }), ...keywords });
const port = (fallback: number | undefined, keywords: SettingKeywords) => int(0, 65_535, fallback, keywords);
const bool = (fallback: boolean | undefined, keywords: SettingKeywords) =>
  Type.Boolean({ ...(fallback === undefined ? {} : { default: fallback }), ...keywords });
const oneOf = (values: readonly string[], fallback: string, keywords: SettingKeywords) =>
  Type.String({ enum: [...values], default: fallback, ...keywords });
const text = (
  fallback: string | undefined,
  keywords: SettingKeywords & { format?: string; pattern?: string },
) => Type.String({ ...(fallback === undefined ? {} : { default: fallback }), ...keywords });

const POSTGRES = { setting: 'EDS_DATABASE_URL', matches: '^postgres(ql)?://', label: 'PostgreSQL only' };
const S3 = { setting: 'EDS_STORAGE_DRIVER', matches: '^s3$', label: '`s3` driver only' };

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const DEFAULT_RETRY_SCHEDULE = [5, 300, 1800, 7200, 18000, 36000, 36000];

export const SETTINGS = Type.Object({
  NODE_ENV: Type.Optional(
    text(undefined, {
      description:
        '`production` turns on production rules: secrets must be given (no generated development ' +
        'secrets), webhook receivers must use `https` unless `EDS_WEBHOOK_ALLOW_HTTP=true`',
    }),
  ),
  EDS_DATABASE_URL: text('./data/eds.sqlite', {
    format: 'database-url',
    description: 'a file path or `sqlite:` URL (embedded), or `postgres://…` (production, scale-out)',
  }),
  EDS_DB_POOL_SIZE: int(1, 500, 10, {
    description: 'PostgreSQL connections per process',
    appliesWhen: POSTGRES,
  }),
  EDS_DB_STATEMENT_TIMEOUT_MS: int(0, 600_000, 5000, {
    description:
      'PostgreSQL `statement_timeout` per connection (0 = none, whatever the role or database sets); `eds migrate` does not apply it',
    appliesWhen: POSTGRES,
  }),
  EDS_DATA_DIR: Type.Optional(
    text(undefined, {
      defaultText: "the SQLite file's folder, else `./data`",
      description: 'where a development deployment keeps generated secrets and local media',
    }),
  ),
  EDS_KEY_DIGEST_SECRET: Type.Optional(
    text(undefined, {
      defaultText: 'generated in development',
      secret: true,
      fileForm: true,
      description:
        'HMAC key for API-key digests (and, derived, for webhook signing secrets at rest). ' +
        '**Required in production.** Change it only as described under Rotation',
    }),
  ),
  EDS_KEY_DIGEST_SECRET_PREVIOUS: Type.Optional(
    text(undefined, {
      secret: true,
      fileForm: true,
      description:
        'the former digest secret while keys move to the current one (see Rotation); refused at ' +
        'start-up if equal to `EDS_KEY_DIGEST_SECRET`',
    }),
  ),
  EDS_MEDIA_SIGNING_SECRET: Type.Optional(
    text(undefined, {
      defaultText: 'generated in development',
      secret: true,
      fileForm: true,
      description: 'HMAC key for audio links on the embedded media host. **Required in production**',
    }),
  ),
  EDS_HOST: text('127.0.0.1', {
    description: 'listen address of all listeners (`0.0.0.0` in the container image)',
  }),
  EDS_PORT: port(8080, { description: 'API port' }),
  EDS_MEDIA_PORT: port(8081, { description: 'embedded media host port' }),
  EDS_ADMIN_PORT: Type.Optional(
    port(undefined, {
      defaultText: 'unset (off)',
      description: 'Prometheus `/metrics`; never expose it publicly',
    }),
  ),
  EDS_PUBLIC_BASE_URL: Type.Optional(
    text(undefined, {
      format: 'http-url',
      defaultText: '`http://EDS_HOST:EDS_PORT`',
      description: "the API's public URL (printed by `eds demo`)",
    }),
  ),
  EDS_MEDIA_BASE_URL: Type.Optional(
    text(undefined, {
      format: 'http-url',
      defaultText: '`http://EDS_HOST:EDS_MEDIA_PORT`',
      description: 'the public URL audio links point at',
    }),
  ),
  EDS_LOG_LEVEL: oneOf(LOG_LEVELS, 'info', {
    description:
      "how much the process logs; `info` adds one line per answer (the access log), which under load is about a fifth of a 401's CPU and a sixth of an encounter detail's (docs/benchmarks.md); at `warn` the metrics still count every answer and the audit keeps its records",
  }),
  EDS_METRICS_GC_PAUSES: bool(false, {
    description:
      '`true` adds `eds_nodejs_gc_duration_seconds`, every garbage-collection pause by kind. Off by ' +
      'default: Node.js builds an object for each collection to report it, which under full load ' +
      "raised the serving process's peak resident memory by 2-13 MB on SQLite in the measured runs " +
      '(docs/benchmarks.md); event-loop lag and the heap gauges are there either way',
  }),
  EDS_DEPLOYMENT_MODE: oneOf(['live', 'sandbox'], 'live', {
    description: '`live` refuses `eds_test_` keys (`test_prefix_not_allowed`); `sandbox` accepts them',
  }),
  EDS_API_KEYS_ENABLED: bool(true, {
    description: '`false` answers every request `401 api_keys_disabled` (incident switch)',
  }),
  EDS_KEY_CACHE_TTL_MS: int(0, 5000, 4000, {
    description:
      'how long a verified key is trusted without a store read; bounds revocation latency when ' +
      'change notifications are lost',
  }),
  EDS_MEDIA_LINK_TTL_SECONDS: int(1, 3600, 300, { description: 'audio link lifetime' }),
  EDS_STORAGE_DRIVER: oneOf(['local', 's3'], 'local', {
    description: '`local` (a folder, served by the media host) or `s3` (any S3-compatible store)',
  }),
  EDS_MEDIA_DIR: Type.Optional(
    text(undefined, {
      defaultText: '`EDS_DATA_DIR/media`',
      description: "the local driver's folder",
    }),
  ),
  EDS_S3_BUCKET: Type.Optional(
    text(undefined, {
      description: "the `s3` driver's bucket",
      appliesWhen: S3,
      requiredWhenApplies: true,
    }),
  ),
  EDS_S3_REGION: text('us-east-1', { description: "the `s3` driver's region", appliesWhen: S3 }),
  EDS_S3_ENDPOINT: Type.Optional(
    text(undefined, {
      format: 'http-url',
      description: 'the S3-compatible endpoint; unset: AWS',
      appliesWhen: S3,
    }),
  ),
  EDS_S3_FORCE_PATH_STYLE: bool(false, {
    description: 'path-style bucket addressing (most S3-compatible stores)',
    appliesWhen: S3,
  }),
  EDS_S3_ACCESS_KEY_ID: Type.Optional(
    text(undefined, {
      description: 'unset: the AWS default credential chain',
      appliesWhen: S3,
    }),
  ),
  EDS_S3_SECRET_ACCESS_KEY: Type.Optional(
    text(undefined, {
      secret: true,
      description: 'unset: the AWS default credential chain',
      appliesWhen: S3,
    }),
  ),
  EDS_S3_PREFIX: text('', { description: 'key prefix of every stored object', appliesWhen: S3 }),
  EDS_STORAGE_TIMEOUT_MS: int(50, 60_000, 2000, {
    description: 'bound on a storage call; beyond it the audio route answers `503 audio_storage_unavailable`',
  }),
  EDS_REQUEST_TIMEOUT_MS: int(100, 600_000, 10_000, { description: 'whole-request timeout' }),
  EDS_MAX_HEADER_BYTES: int(1024, 65_536, 16_384, {
    description: 'request header limit (larger: `431` problem+json)',
  }),
  EDS_SHUTDOWN_GRACE_MS: int(0, 120_000, 10_000, {
    description: 'how long in-flight work may take after SIGTERM',
  }),
  EDS_KEEP_ALIVE_TIMEOUT_MS: int(100, 600_000, 5000, {
    description: 'an idle keep-alive connection is closed after this long',
  }),
  EDS_MAX_CONNECTIONS: int(16, 1_000_000, 10_000, {
    description:
      'most connections the process holds at once over the API, media and admin ports; at the ' +
      'bound the longest-idle one is closed to admit the next (see Connections)',
  }),
  EDS_AUDIT_COMMIT_TIMEOUT_MS: int(50, 60_000, 2000, {
    description:
      "longest an answer waits for its audit record's commit; beyond it (or when the audit store " +
      'refuses the write) the answer is `503 audit_unavailable` (see Audit)',
  }),
  EDS_AUDIT_GROUP_MAX: int(1, 10_000, 2000, { description: 'most audit records in one group commit' }),
  EDS_AUDIT_SQLITE_SYNCHRONOUS: oneOf(['full', 'normal'], 'full', {
    description:
      'SQLite audit commits: `full` is on disk before the answer (survives power loss); `normal` ' +
      'survives a crash of the process but not of the host, and costs less (see Audit, Cost)',
  }),
  EDS_AUDIT_FLUSH_MS: int(10, 600_000, 200, {
    description:
      'batch interval of the folded rows for refusals that named no key: the most of those a ' +
      'crash can lose (see Audit)',
  }),
  EDS_AUDIT_BATCH_SIZE: int(1, 10_000, 500, { description: 'folded rows per write' }),
  EDS_AUDIT_INDEX_MERGE_MS: int(0, 60_000, 250, {
    description:
      "how often each API process merges the audit per-patient index's pending list, so that audit " +
      'commits do not (0 = never: the commits merge it; see Running on PostgreSQL)',
    appliesWhen: POSTGRES,
  }),
  EDS_WEBHOOKS_ENABLED: bool(false, {
    description:
      'the deployment switch for `recording.transcript_ready` delivery (planned, not generally available)',
  }),
  EDS_WEBHOOK_ALLOW_PRIVATE_NETWORKS: bool(false, {
    description:
      'allow receivers on loopback/private/link-local addresses (tests and private deployments only)',
  }),
  EDS_WEBHOOK_ALLOW_HTTP: Type.Optional(
    bool(undefined, {
      defaultText: '`true` in development, `false` in production',
      description: 'allow `http://` receivers',
    }),
  ),
  EDS_WEBHOOK_HEADER_PREFIX: text('Eds-', {
    pattern: '^[A-Za-z][A-Za-z0-9]*-$',
    description: 'prefix of the five delivery headers',
  }),
  EDS_WEBHOOK_RETRY_SCHEDULE: Type.Array(Type.Number({ minimum: 0 }), {
    minItems: 1,
    default: DEFAULT_RETRY_SCHEDULE,
    textForm: 'comma-list',
    description: 'seconds before attempts 2…8 (about 27.6 h in all)',
  }),
  EDS_WEBHOOK_JITTER: Type.Number({
    minimum: 0,
    maximum: 0.5,
    default: 0.2,
    description: '± ratio applied to each delay',
  }),
  EDS_WEBHOOK_TIMEOUT_MS: int(100, 60_000, 15_000, { description: 'per-attempt timeout' }),
  EDS_WEBHOOK_CONCURRENCY: int(1, 1024, 32, { description: 'in-flight attempts per worker' }),
  EDS_WEBHOOK_ENDPOINT_CONCURRENCY: int(1, 256, 4, {
    description: 'in-flight attempts per worker to one endpoint',
  }),
  EDS_WEBHOOK_LEASE_MS: int(1000, 3_600_000, 10_000, {
    description:
      "a claimed delivery's lease, renewed every third while held; a crashed worker's work is " +
      'reclaimed after it',
  }),
  EDS_WEBHOOK_POLL_MS: int(10, 60_000, 1000, { description: 'fallback poll when no wake-up arrives' }),
  EDS_WEBHOOK_PAUSE_AFTER: Type.Integer({
    minimum: 1000,
    default: 72 * 3_600_000,
    defaultText: '`72h`',
    textForm: 'duration',
    description:
      'an endpoint whose attempts have all failed this long is paused (its deliveries wait for ' +
      '`eds webhook resume`); seconds, or a number with `s`, `m`, `h` or `d`',
  }),
  EDS_WEBHOOK_PROXY_URL: Type.Optional(
    text(undefined, {
      format: 'proxy-url',
      secret: true,
      fileForm: true,
      description:
        '`http://[user:password@]host:port` of an HTTP CONNECT forward proxy every delivery goes ' +
        "through (fixed egress addresses for receivers' allowlists)",
    }),
  ),
  EDS_RATE_LIMIT_PER_KEY: int(0, 1_000_000, 100, {
    description:
      'requests a second per API key (token bucket refill); `0` turns key limits off. An ' +
      'organization may have its own: `eds org update ID --rate-limit N|default`',
  }),
  EDS_RATE_LIMIT_BURST: int(1, 10_000_000, 200, {
    description:
      "bucket size at the deployment's rate (an organization's own rate keeps the same " +
      'burst-to-rate ratio)',
  }),
  EDS_RATE_LIMIT_UNAUTHENTICATED: int(0, 1_000_000, 50, {
    description:
      'requests a second per client address that identify no key (missing, malformed, unknown ' +
      'or test-prefixed tokens), burst 2×; `0` turns it off',
  }),
  EDS_REDIS_URL: Type.Optional(
    text(undefined, {
      format: 'redis-url',
      description:
        '`redis://` or `rediss://` URL: API processes share their buckets through it. Unset: each ' +
        'process limits alone',
    }),
  ),
  EDS_RATE_LIMIT_HOLD_MS: int(0, 60_000, 1000, {
    description:
      'longest a `429 rate_limited` is held before it is sent: until the request could have ' +
      "succeeded (its bucket's next token), at most this; `0` sends refusals at once (see Rate limits)",
  }),
  EDS_REDIS_COMMAND_TIMEOUT_MS: int(1, 60_000, 250, {
    description:
      'a Redis answer slower than this counts as an outage: that request is limited by the ' +
      'process alone, Redis is asked again a second later, and the first answer in time ends the ' +
      'outage (`eds_rate_limit_redis_up` back to 1)',
  }),
  EDS_TRUST_PROXY: Type.Optional(
    text(undefined, {
      format: 'address-list',
      description:
        'comma-separated addresses or CIDRs of the load balancers whose `X-Forwarded-For` is ' +
        'believed (see Rate limits)',
    }),
  ),
  EDS_DEPRECATIONS: Type.Optional(
    text(undefined, {
      description:
        'routes announced for retirement, as JSON keyed by operation ID: `{"getAudio": ' +
        '{"deprecation": "2026-12-01T00:00:00Z", "sunset": "2027-06-01T00:00:00Z", "link": ' +
        '"https://…/notice"}}`. Every answer of such a route carries `Deprecation: @<epoch>` (RFC ' +
        '9745), `Sunset: <HTTP-date>` (RFC 8594) and `Link: <notice>; rel="deprecation"`, and the ' +
        'OpenAPI document marks it deprecated. Refused at start-up: an unknown operation ID ' +
        '(`listEncounters`, `getEncounter`, `getDocument`, `getTranscript`, `getAudio`), a date ' +
        'without an offset, a sunset less than 180 days after the deprecation, a link that is ' +
        'neither an http(s) URL nor a `/path`. Record the announcement in CHANGELOG.md',
    }),
  ),
});

export type SettingName = keyof typeof SETTINGS.properties;

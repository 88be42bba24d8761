/**
 * Prometheus metrics, one registry per process, served on the admin port only. Every metric the
 * service exposes is declared here so their names and labels are seen together.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { observeGcDurations } from './gcDurationMetric.js';
import { OutcomeTally } from './outcomeTally.js';
import { ResponseTally } from './responseTally.js';
import { RouteLatencyHistogram } from './routeLatencyHistogram.js';
import { registerRuntimeMetrics } from './runtimeMetrics.js';

/**
 * prom-client's default metrics include three gauges named like counters
 * (`nodejs_active_{handles,requests,resources}_total`), which Prometheus' naming rules refuse;
 * their per-type twins without the suffix stay, and `sum()` over them gives the same total.
 */
const GAUGES_NAMED_LIKE_COUNTERS = ['handles', 'requests', 'resources'].map(
  (kind) => `eds_nodejs_active_${kind}_total`,
);

/** Values read when scraped, each set by whoever owns it (services.ts, apiContext.ts). */
export interface MetricSources {
  keysOffCurrentDigestSecret?: () => Promise<number>;
  pausedWebhookEndpoints?: () => Promise<number>;
  /** Records waiting in the API's audit queue. */
  auditQueueDepth?: () => number;
}

/** A gauge read from the store when scraped (its source set later by whoever owns the store). */
function storeGauge(
  registry: Registry,
  name: string,
  help: string,
  read: () => Promise<number> | undefined,
): Gauge {
  return new Gauge({
    name,
    help,
    registers: [registry],
    async collect() {
      try {
        const value = await read();
        if (value !== undefined) this.set(value);
      } catch {
        // The store is unreachable: keep the last value; the scrape itself must not fail.
      }
    },
  });
}

/** Upper bounds, in seconds, of `eds_http_request_duration_seconds`. */
export const HTTP_LATENCY_BUCKETS: readonly number[] = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
];

export interface MetricsOptions {
  /** Count every garbage-collection pause (`EDS_METRICS_GC_PAUSES`). */
  gcPauses?: boolean;
}

export function createMetrics(options: MetricsOptions = {}) {
  const registry = new Registry();
  registerRuntimeMetrics(registry, 'eds_');
  for (const name of GAUGES_NAMED_LIKE_COUNTERS) registry.removeSingleMetric(name);
  const stopObservingGc = options.gcPauses
    ? observeGcDurations(registry, 'eds_nodejs_gc_duration_seconds')
    : () => {};
  const sources: MetricSources = {};
  const responses = new ResponseTally();
  const keyCacheLookups = new OutcomeTally<'hit' | 'miss' | 'joined'>();
  return {
    registry,
    sources,
    /** Stops what observes the process for these metrics (with the services that own them). */
    close: stopObservingGc,
    /** Every HTTP answer is counted here (`eds_http_responses_total`). */
    responses,
    /** Every key verification's cache outcome is counted here (`eds_key_cache_lookups_total`). */
    keyCacheLookups,
    /** Every HTTP answer's time (`eds_http_request_duration_seconds`). */
    httpDuration: new RouteLatencyHistogram({
      name: 'eds_http_request_duration_seconds',
      help: 'HTTP request latency by route and status.',
      buckets: HTTP_LATENCY_BUCKETS,
      registers: [registry],
    }),
    httpResponses: new Counter({
      name: 'eds_http_responses_total',
      help: 'HTTP responses by route, status and reason code.',
      labelNames: ['route', 'status', 'reason_code'] as const,
      registers: [registry],
      collect() {
        responses.addTo(this);
      },
    }),
    openConnections: new Gauge({
      name: 'eds_http_open_connections',
      help: 'Connections open now, by port (api, media, admin); EDS_MAX_CONNECTIONS bounds their sum.',
      labelNames: ['port'] as const,
      registers: [registry],
    }),
    connectionsShed: new Counter({
      name: 'eds_http_connections_shed_total',
      help: 'Idle connections closed to admit a new one while EDS_MAX_CONNECTIONS were open, by port.',
      labelNames: ['port'] as const,
      registers: [registry],
    }),
    keyCache: new Counter({
      name: 'eds_key_cache_lookups_total',
      help: "API key verifications by cache outcome (hit; miss: a store read; joined: waited for the same key's read under way).",
      labelNames: ['outcome'] as const,
      registers: [registry],
      collect() {
        keyCacheLookups.addTo(this);
      },
    }),
    keyRedigests: new Counter({
      name: 'eds_api_key_redigests_total',
      help: 'Keys moved from the previous digest secret to the current one on use.',
      registers: [registry],
    }),
    keysOffCurrentDigestSecret: storeGauge(
      registry,
      'eds_api_keys_off_current_digest_secret',
      'Usable keys not yet known to be on the current digest secret (0: the previous one can go).',
      () => sources.keysOffCurrentDigestSecret?.(),
    ),
    auditQueueDepth: new Gauge({
      name: 'eds_audit_queue_depth',
      help: 'Audit records waiting to be written.',
      registers: [registry],
      // Read when scraped: setting it on every queued record cost more than the queueing.
      collect() {
        const depth = sources.auditQueueDepth?.();
        if (depth !== undefined) this.set(depth);
      },
    }),
    auditWritten: new Counter({
      name: 'eds_audit_records_written_total',
      help: 'Audit records committed to the store.',
      registers: [registry],
    }),
    auditGroupCommitDuration: new Histogram({
      name: 'eds_audit_group_commit_seconds',
      help: 'Time from a group’s hand-over to its commit’s answer reaching the request thread; committed groups only.',
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    }),
    auditGroupRecords: new Histogram({
      name: 'eds_audit_group_records',
      help: 'Records per group commit (answers that waited for one commit).',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048],
      registers: [registry],
    }),
    auditWriteFailures: new Counter({
      name: 'eds_audit_write_failures_total',
      help: 'Failed audit writes (a failed group commit refuses its answers; folded rows are kept and retried).',
      registers: [registry],
    }),
    webhookAttempts: new Counter({
      name: 'eds_webhook_attempts_total',
      help: 'Webhook delivery attempts by outcome (succeeded, retry, failed, cancelled).',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    webhookDeliveriesExhausted: new Counter({
      name: 'eds_webhook_deliveries_exhausted_total',
      help: 'Webhook deliveries whose retry round ended without success (listed by `eds webhook failures`).',
      registers: [registry],
    }),
    webhookEndpointPauses: new Counter({
      name: 'eds_webhook_endpoint_pauses_total',
      help: 'Webhook endpoints paused after failing for EDS_WEBHOOK_PAUSE_AFTER (their deliveries wait).',
      registers: [registry],
    }),
    webhookEndpointsPaused: storeGauge(
      registry,
      'eds_webhook_endpoints_paused',
      'Webhook endpoints paused now, waiting for `eds webhook resume`.',
      () => sources.pausedWebhookEndpoints?.(),
    ),
    webhookDeliveryLatency: new Histogram({
      name: 'eds_webhook_event_to_delivery_seconds',
      help: 'Time from event to successful delivery.',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 5, 30, 300, 3600],
      registers: [registry],
    }),
    rateLimited: new Counter({
      name: 'eds_rate_limited_total',
      help: 'Requests answered 429 by bucket kind (key, address).',
      labelNames: ['bucket'] as const,
      registers: [registry],
    }),
    rateLimitRedisUp: new Gauge({
      name: 'eds_rate_limit_redis_up',
      help: '1 while rate-limit buckets are shared through Redis; 0 when limiting alone.',
      registers: [registry],
    }),
    rateLimitRedisCallDuration: new Histogram({
      name: 'eds_rate_limit_redis_call_seconds',
      help: 'Time from sending a rate-limit script call to Redis to its answer (each call decides one turn of takes; every keyed request waits for one); failed calls are not included.',
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.25],
      registers: [registry],
    }),
    rateLimitLocalDecisions: new Counter({
      name: 'eds_rate_limit_local_decisions_total',
      help: 'Requests limited by this process alone because Redis could not be reached.',
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

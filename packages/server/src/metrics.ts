/**
 * Prometheus metrics, one registry per process, served on the admin port only. Every metric the
 * service exposes is declared here so their names and labels are seen together.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'eds_' });
  return {
    registry,
    httpDuration: new Histogram({
      name: 'eds_http_request_duration_seconds',
      help: 'HTTP request latency by route and status.',
      labelNames: ['route', 'status'] as const,
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    httpResponses: new Counter({
      name: 'eds_http_responses_total',
      help: 'HTTP responses by route, status and reason code.',
      labelNames: ['route', 'status', 'reason_code'] as const,
      registers: [registry],
    }),
    keyCache: new Counter({
      name: 'eds_key_cache_lookups_total',
      help: 'API key verifications by cache outcome (hit, miss).',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    auditQueueDepth: new Gauge({
      name: 'eds_audit_queue_depth',
      help: 'Audit records waiting to be written.',
      registers: [registry],
    }),
    auditWritten: new Counter({
      name: 'eds_audit_records_written_total',
      help: 'Audit records committed to the store.',
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
    webhookDeliveryLatency: new Histogram({
      name: 'eds_webhook_event_to_delivery_seconds',
      help: 'Time from event to successful delivery.',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 5, 30, 300, 3600],
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

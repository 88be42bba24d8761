/**
 * Webhook delivery benchmark (PostgreSQL): one real `eds worker` process delivering to a local
 * node:http receiver in this process that verifies every signature.
 *
 * 1. Throughput: a backlog of --backlog events is written first, then the worker is started;
 *    deliveries per second are counted from the first receipt to the last.
 * 2. Latency: with the worker idle, events are finalized one per transaction at --rate per second
 *    for --seconds; the time from the finalization's commit to the receiver's receipt is reported
 *    as p50/p99.
 *
 * Usage: node --import tsx bench/webhooks/deliveries.ts [--backlog 5000] [--rate 200] [--seconds 5]
 *        [--concurrency 64] [--endpoint-concurrency N (default: --concurrency)]
 * The PostgreSQL server comes from BENCH_DATABASE_URL or TEST_DATABASE_URL; a scratch database
 * is created on it and dropped afterwards.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { now, openScratch, percentile, startReceiver } from './scratch.js';

const { values } = parseArgs({
  options: {
    backlog: { type: 'string', default: '5000' },
    rate: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '64' },
    'endpoint-concurrency': { type: 'string' },
  },
});
const BACKLOG = Number(values.backlog);
const RATE = Number(values.rate);
const SECONDS = Number(values.seconds);
const ENDPOINT_CONCURRENCY = values['endpoint-concurrency'] ?? values.concurrency;

const admin = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
if (!admin) {
  console.error('set BENCH_DATABASE_URL (or TEST_DATABASE_URL) to a PostgreSQL server');
  process.exit(2);
}

let secret = '';
const receiver = await startReceiver(() => secret);
const scratch = await openScratch({
  root: join(import.meta.dirname, '..', '..'),
  node: process.execPath,
  adminUrl: admin,
  name: 'webhooks',
  receiver,
  settings: {
    EDS_WEBHOOK_CONCURRENCY: values.concurrency,
    EDS_WEBHOOK_ENDPOINT_CONCURRENCY: ENDPOINT_CONCURRENCY,
  },
});
secret = scratch.signingSecret;
try {
  // 1. Throughput from a backlog.
  for (let i = 0; i < BACKLOG; i += 500) await scratch.commitEvents(Math.min(500, BACKLOG - i));
  await scratch.startWorkers(1);
  await receiver.waitFor(BACKLOG);
  const throughput = (BACKLOG - 1) / ((receiver.span.last - receiver.span.first) / 1000);

  // 2. Latency from each finalization's commit to its receipt, at a steady rate.
  const committed = new Map<string, number>();
  const total = RATE * SECONDS;
  const started = performance.now();
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const [eventId] = await scratch.commitEvents(1);
    committed.set(eventId!, now());
  }
  await receiver.waitFor(BACKLOG + total);
  const latencies = [...committed].map(([id, at]) => receiver.arrivals.get(id)! - at).sort((a, b) => a - b);

  console.log(
    JSON.stringify(
      {
        store: 'postgres',
        backlog: BACKLOG,
        deliveries_per_second: Math.round(throughput),
        latency_events: total,
        latency_rate_per_second: RATE,
        finalization_to_receipt_ms: {
          p50: Number(percentile(latencies, 50).toFixed(1)),
          p99: Number(percentile(latencies, 99).toFixed(1)),
          max: Number(latencies.at(-1)?.toFixed(1)),
        },
        invalid_signatures: receiver.invalidSignatures(),
        worker_concurrency: Number(values.concurrency),
        endpoint_concurrency: Number(ENDPOINT_CONCURRENCY),
      },
      null,
      2,
    ),
  );
} finally {
  await scratch.close();
  receiver.close();
}

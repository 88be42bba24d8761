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
import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { loadConfig } from '../../packages/server/src/config.js';
import { createServices } from '../../packages/server/src/services.js';
import { migrateToLatest } from '../../packages/server/src/store/database.js';
import { upsertOrganization } from '../../packages/server/src/store/organizations.js';
import { recordTranscriptsReady, type TranscriptReady } from '../../packages/server/src/webhooks/events.js';
import {
  activateSubscription,
  createSubscription,
  setCorrelationStatus,
} from '../../packages/server/src/webhooks/subscriptions.js';

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
const EDS_BIN = join(import.meta.dirname, '..', '..', 'packages', 'server', 'bin', 'eds.js');

const admin = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
if (!admin) {
  console.error('set BENCH_DATABASE_URL (or TEST_DATABASE_URL) to a PostgreSQL server');
  process.exit(2);
}

const dbName = `eds_bench_webhooks_${process.pid}`;
const dir = mkdtempSync(join(tmpdir(), 'eds-bench-webhooks-'));
const url = new URL(admin);
url.pathname = `/${dbName}`;
const env: Record<string, string> = {
  EDS_DATABASE_URL: url.toString(),
  EDS_DATA_DIR: dir,
  EDS_KEY_DIGEST_SECRET: 'bench-digest-secret-0123456789abcdef',
  EDS_MEDIA_SIGNING_SECRET: 'bench-media-secret-0123456789abcdef',
  EDS_LOG_LEVEL: 'error',
  EDS_WEBHOOKS_ENABLED: 'true',
  EDS_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  EDS_WEBHOOK_ALLOW_HTTP: 'true',
  EDS_WEBHOOK_CONCURRENCY: values.concurrency,
  EDS_WEBHOOK_ENDPOINT_CONCURRENCY: values['endpoint-concurrency'] ?? values.concurrency,
  EDS_DB_POOL_SIZE: '16',
};

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(text);
  await client.end();
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

let worker: ChildProcess | undefined;
await adminQuery(`CREATE DATABASE ${dbName}`);
const services = createServices(loadConfig(env, dir));
try {
  await migrateToLatest(services.store.db);
  const org = 'org_bench';
  await upsertOrganization(services.store.db, {
    id: org,
    name: 'Bench clinic',
    allowlisted: true,
    routes: ['encounters', 'documents'],
    apiKeysEnabled: true,
    updatedAt: Date.now(),
  });

  // The receiver: verifies each signature as a partner would and notes when each event arrived.
  let secret = '';
  const arrivals = new Map<string, number>();
  let invalid = 0;
  let firstAt = 0;
  let lastAt = 0;
  let onArrival: (() => void) | undefined;
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.timeOrigin + performance.now();
      const body = Buffer.concat(chunks);
      const ts = String(req.headers['eds-timestamp']);
      const mac = createHmac('sha256', secret).update(`${ts}.`).update(body).digest();
      const got = Buffer.from(String(req.headers['eds-signature']).slice(3), 'hex');
      if (got.length !== mac.length || !timingSafeEqual(got, mac)) invalid++;
      const eventId = String(req.headers['eds-event-id']);
      if (!arrivals.has(eventId)) arrivals.set(eventId, at);
      if (firstAt === 0) firstAt = at;
      lastAt = at;
      res.writeHead(204).end();
      onArrival?.();
    });
  });
  receiver.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = (receiver.address() as AddressInfo).port;

  const sub = await createSubscription(services, {
    organizationId: org,
    url: `http://127.0.0.1:${port}/hook`,
  });
  secret = sub.signing_secret;
  await activateSubscription(services, sub.subscription_id, {
    routes: ['transcript'],
    by: 'bench',
    reference: 'bench',
  });
  await setCorrelationStatus(services, sub.subscription_id, 'confirmed');

  let n = 0;
  const ready = (count: number): TranscriptReady[] =>
    Array.from({ length: count }, () => {
      n++;
      return { organizationId: org, encounterId: `enc_bench_${n}`, documentId: `doc_bench_${n}` };
    });
  const waitFor = (count: number) =>
    new Promise<void>((resolve) => {
      onArrival = () => {
        if (arrivals.size >= count) resolve();
      };
      onArrival();
    });

  // 1. Throughput from a backlog.
  for (let i = 0; i < BACKLOG; i += 500) {
    await services.store.db.transaction().execute((tx) =>
      recordTranscriptsReady(tx, ready(Math.min(500, BACKLOG - i)), Date.now(), {
        config: services.config,
      }),
    );
  }
  worker = spawn(process.execPath, [EDS_BIN, 'worker'], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitFor(BACKLOG);
  const throughput = (BACKLOG - 1) / ((lastAt - firstAt) / 1000);

  // 2. Latency from each finalization's commit to its receipt, at a steady rate.
  const committed = new Map<string, number>();
  const total = RATE * SECONDS;
  const started = performance.now();
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const [eventId] = await services.store.db
      .transaction()
      .execute((tx) => recordTranscriptsReady(tx, ready(1), Date.now(), { config: services.config }));
    committed.set(eventId!, performance.timeOrigin + performance.now());
  }
  await waitFor(BACKLOG + total);
  const latencies = [...committed].map(([id, at]) => arrivals.get(id)! - at).sort((a, b) => a - b);

  const result = {
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
    invalid_signatures: invalid,
    worker_concurrency: Number(values.concurrency),
    endpoint_concurrency: Number(values['endpoint-concurrency'] ?? values.concurrency),
  };
  console.log(JSON.stringify(result, null, 2));
  receiver.closeAllConnections();
  receiver.close();
} finally {
  if (worker && worker.exitCode === null) {
    const exited = new Promise((r) => worker!.once('exit', r));
    worker.kill('SIGTERM');
    await exited;
  }
  await services.close();
  await adminQuery(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  rmSync(dir, { recursive: true, force: true });
}

/**
 * One import's burst of events (PostgreSQL, two real `eds worker` processes): --events events
 * committed in one transaction, as an import writes them, and the time from that commit to each
 * event's first delivery attempt reaching a local receiver (p50/p99/max), with deliveries per
 * second from the commit to the last event. Run directly and through a forward proxy process.
 *
 * Usage: node --import tsx bench/webhooks/importBurst.ts [--events 1000] [--endpoint-concurrency 32]
 * The PostgreSQL server comes from BENCH_DATABASE_URL or TEST_DATABASE_URL (a scratch database).
 */
import { type ChildProcess, spawn } from 'node:child_process';
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
import { recordTranscriptsReady } from '../../packages/server/src/webhooks/events.js';
import {
  activateSubscription,
  createSubscription,
  setCorrelationStatus,
} from '../../packages/server/src/webhooks/subscriptions.js';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '1000' },
    'endpoint-concurrency': { type: 'string', default: '32' },
  },
});
const EVENTS = Number(values.events);
const ROOT = join(import.meta.dirname, '..', '..');
const EDS_BIN = join(ROOT, 'packages', 'server', 'bin', 'eds.js');
const PROXY = join(ROOT, 'packages', 'server', 'test', 'webhooks', 'fixtures', 'forwardProxy.ts');
const admin = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
if (!admin) {
  console.error('set BENCH_DATABASE_URL (or TEST_DATABASE_URL) to a PostgreSQL server');
  process.exit(2);
}

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(text);
  await client.end();
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const now = () => performance.timeOrigin + performance.now();

/** The forward proxy as its own process; resolves with its port. */
function startProxy(): Promise<{ port: number; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', PROXY], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve) =>
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      const m = /listening (\d+)/.exec(chunk);
      if (m) resolve({ port: Number(m[1]), child });
    }),
  );
}

async function run(mode: 'direct' | 'proxy') {
  const dbName = `eds_bench_burst_${process.pid}_${mode}`;
  const dir = mkdtempSync(join(tmpdir(), 'eds-bench-burst-'));
  const url = new URL(admin!);
  url.pathname = `/${dbName}`;
  const proxy = mode === 'proxy' ? await startProxy() : undefined;
  const env: Record<string, string> = {
    EDS_DATABASE_URL: url.toString(),
    EDS_DATA_DIR: dir,
    EDS_KEY_DIGEST_SECRET: 'bench-digest-secret-0123456789abcdef',
    EDS_MEDIA_SIGNING_SECRET: 'bench-media-secret-0123456789abcdef',
    EDS_LOG_LEVEL: 'error',
    EDS_WEBHOOKS_ENABLED: 'true',
    EDS_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    EDS_WEBHOOK_ALLOW_HTTP: 'true',
    EDS_WEBHOOK_ENDPOINT_CONCURRENCY: values['endpoint-concurrency'],
    ...(proxy ? { EDS_WEBHOOK_PROXY_URL: `http://127.0.0.1:${proxy.port}` } : {}),
  };
  await adminQuery(`CREATE DATABASE ${dbName}`);
  const services = createServices(loadConfig(env, dir));
  const workers: ChildProcess[] = [];
  const firstAttempt = new Map<string, number>();
  let done: () => void = () => {};
  const allArrived = new Promise<void>((resolve) => (done = resolve));
  const receiver = createServer((req, res) => {
    req.resume().on('end', () => {
      const eventId = String(req.headers['eds-event-id']);
      if (!firstAttempt.has(eventId)) firstAttempt.set(eventId, now());
      res.writeHead(204).end();
      if (firstAttempt.size >= EVENTS) done();
    });
  });
  receiver.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
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
    const sub = await createSubscription(services, {
      organizationId: org,
      url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
    });
    await activateSubscription(services, sub.subscription_id, {
      routes: ['transcript'],
      by: 'bench',
      reference: 'bench',
    });
    await setCorrelationStatus(services, sub.subscription_id, 'confirmed');
    for (let i = 0; i < 2; i++) {
      workers.push(
        spawn(process.execPath, [EDS_BIN, 'worker'], {
          cwd: dir,
          env: { PATH: process.env.PATH ?? '', ...env },
          stdio: ['ignore', 'ignore', 'inherit'],
        }),
      );
    }
    // Time for both workers to start (sources are compiled at start); the burst is measured from its commit.
    await new Promise((r) => setTimeout(r, 8000));
    const ready = Array.from({ length: EVENTS }, (_, n) => ({
      organizationId: org,
      encounterId: `enc_${n}`,
      documentId: `doc_${n}`,
    }));
    const ids = await services.store.db
      .transaction()
      .execute((tx) => recordTranscriptsReady(tx, ready, Date.now(), { config: services.config }));
    const committedAt = now();
    await allArrived;
    const lags = ids.map((id) => firstAttempt.get(id)! - committedAt).sort((a, b) => a - b);
    return {
      mode,
      events: EVENTS,
      commit_to_first_attempt_ms: {
        p50: Math.round(percentile(lags, 50)),
        p99: Math.round(percentile(lags, 99)),
        max: Math.round(lags.at(-1)!),
      },
      deliveries_per_second: Math.round(EVENTS / (lags.at(-1)! / 1000)),
    };
  } finally {
    for (const w of workers) {
      const exited = new Promise((r) => w.once('exit', r));
      w.kill('SIGTERM');
      await exited;
    }
    proxy?.child.kill('SIGTERM');
    receiver.closeAllConnections();
    receiver.close();
    await services.close();
    await adminQuery(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    rmSync(dir, { recursive: true, force: true });
  }
}

const results = [await run('direct'), await run('proxy')];
console.log(
  JSON.stringify(
    { store: 'postgres', workers: 2, endpoint_concurrency: Number(values['endpoint-concurrency']), results },
    null,
    2,
  ),
);

/**
 * What the webhook benchmarks share: a scratch PostgreSQL database set up by the code under test
 * (its own migrations and subscription calls, so another checkout can be measured the same way),
 * a receiver on loopback that verifies every signature and notes each event's first arrival, and
 * `eds worker` processes started and awaited until they listen for new work.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

type ServerCode = {
  config: typeof import('../../packages/server/src/config.js');
  services: typeof import('../../packages/server/src/services.js');
  migrate: typeof import('../../packages/server/src/database/migrate.js');
  organizations: typeof import('../../packages/server/src/store/organizations.js');
  events: typeof import('../../packages/server/src/webhooks/events.js');
  subscriptions: typeof import('../../packages/server/src/webhooks/subscriptions.js');
};

/** The server modules of a checkout (this one, or the code compared with). */
async function serverCode(root: string): Promise<ServerCode> {
  const source = (path: string) => join(root, 'packages', 'server', 'src', path);
  const load = (path: string) => import(source(path));
  // An older checkout keeps its migrations behind store/database.ts.
  const migrate = ['database/migrate.ts', 'store/database.ts'].find((path) => existsSync(source(path)));
  if (migrate === undefined) throw new Error(`no migration module under ${root}`);
  return {
    config: await load('config.ts'),
    services: await load('services.ts'),
    migrate: await load(migrate),
    organizations: await load('store/organizations.ts'),
    events: await load('webhooks/events.ts'),
    subscriptions: await load('webhooks/subscriptions.ts'),
  };
}

export const percentile = (sorted: readonly number[], p: number): number =>
  sorted.length === 0
    ? Number.NaN
    : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across this process. */
export const now = () => performance.timeOrigin + performance.now();

async function adminQuery(adminUrl: string, text: string, values: unknown[] = []) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

export interface Receiver {
  readonly url: string;
  /** Each event's first arrival (wall-clock ms). */
  readonly arrivals: Map<string, number>;
  /** First and last arrival of any attempt. */
  readonly span: { first: number; last: number };
  invalidSignatures(): number;
  /** Resolves once `count` distinct events have arrived. */
  waitFor(count: number): Promise<void>;
  close(): void;
}

/** A receiver that checks each signature as a partner would and answers 204. */
export async function startReceiver(secret: () => string): Promise<Receiver> {
  const arrivals = new Map<string, number>();
  const span = { first: 0, last: 0 };
  let invalid = 0;
  let waiting: { count: number; resolve: () => void } | undefined;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = now();
      const body = Buffer.concat(chunks);
      const mac = createHmac('sha256', secret())
        .update(`${String(req.headers['eds-timestamp'])}.`)
        .update(body)
        .digest();
      const got = Buffer.from(String(req.headers['eds-signature']).slice(3), 'hex');
      if (got.length !== mac.length || !timingSafeEqual(got, mac)) invalid++;
      const eventId = String(req.headers['eds-event-id']);
      if (!arrivals.has(eventId)) arrivals.set(eventId, at);
      if (span.first === 0) span.first = at;
      span.last = at;
      res.writeHead(204).end();
      if (waiting && arrivals.size >= waiting.count) waiting.resolve();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    arrivals,
    span,
    invalidSignatures: () => invalid,
    waitFor: (count) =>
      new Promise((resolve) => {
        waiting = { count, resolve };
        if (arrivals.size >= count) resolve();
      }),
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

export interface ScratchOptions {
  /** The checkout whose code sets up the database and runs the workers. */
  root: string;
  /** The Node.js binary that runs the workers. */
  node: string;
  /** A PostgreSQL server's URL; the scratch database is created on it and dropped by `close`. */
  adminUrl: string;
  /** Names the scratch database (letters, digits, underscores). */
  name: string;
  receiver: Receiver;
  /** Settings of the workers beyond the benchmark's own (limits, the proxy). */
  settings: Record<string, string>;
}

/** Whether a checkout's code knows the forward proxy setting (older code ignores it). */
export function supportsProxy(root: string): boolean {
  const config = readFileSync(join(root, 'packages', 'server', 'src', 'config.ts'), 'utf8');
  return config.includes('EDS_WEBHOOK_PROXY_URL');
}

export interface Scratch {
  /** Commits one event per item in one transaction, as an import does; their ids. */
  commitEvents(count: number): Promise<string[]>;
  /**
   * Starts `count` worker processes and resolves once each listens for new work, with how long
   * that took (ms).
   */
  startWorkers(count: number): Promise<number>;
  /** The subscription's signing secret, for the receiver. */
  readonly signingSecret: string;
  close(): Promise<void>;
}

const ORG = 'org_bench';

/**
 * A scratch database with one organization and one activated subscription to the receiver,
 * written by the root's own code (its migrations, its subscription calls).
 */
export async function openScratch(options: ScratchOptions): Promise<Scratch> {
  const code = await serverCode(options.root);
  const dbName = `eds_bench_${options.name}_${process.pid}`;
  const dir = mkdtempSync(join(tmpdir(), 'eds-bench-webhooks-'));
  const url = new URL(options.adminUrl);
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
    EDS_DB_POOL_SIZE: '16',
    ...options.settings,
  };
  await adminQuery(options.adminUrl, `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await adminQuery(options.adminUrl, `CREATE DATABASE ${dbName}`);
  const services = code.services.createServices(code.config.loadConfig(env, dir));
  const workers: ChildProcess[] = [];
  const close = async () => {
    await Promise.all(
      workers.map(async (worker) => {
        if (worker.exitCode !== null) return;
        const exited = new Promise((r) => worker.once('exit', r));
        worker.kill('SIGTERM');
        await exited;
      }),
    );
    await services.close();
    await adminQuery(options.adminUrl, `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await code.migrate.migrateToLatest(services.store.db);
    await code.organizations.upsertOrganization(services.store.db, {
      id: ORG,
      name: 'Bench clinic',
      allowlisted: true,
      routes: ['encounters', 'documents'],
      apiKeysEnabled: true,
      updatedAt: Date.now(),
    });
    const sub = await code.subscriptions.createSubscription(services, {
      organizationId: ORG,
      url: options.receiver.url,
    });
    await code.subscriptions.activateSubscription(services, sub.subscription_id, {
      routes: ['transcript'],
      by: 'bench',
      reference: 'bench',
    });
    await code.subscriptions.setCorrelationStatus(services, sub.subscription_id, 'confirmed');
    let n = 0;
    return {
      signingSecret: sub.signing_secret,
      commitEvents: (count) => {
        const ready = Array.from({ length: count }, () => {
          n++;
          return { organizationId: ORG, encounterId: `enc_bench_${n}`, documentId: `doc_bench_${n}` };
        });
        return services.store.db
          .transaction()
          .execute((tx) =>
            code.events.recordTranscriptsReady(tx, ready, Date.now(), { config: services.config }),
          );
      },
      startWorkers: async (count) => {
        const bin = join(options.root, 'packages', 'server', 'bin', 'eds.js');
        const started = now();
        for (let i = 0; i < count; i++) {
          workers.push(
            spawn(options.node, [bin, 'worker'], {
              cwd: dir,
              env: { PATH: process.env.PATH ?? '', ...env },
              stdio: ['ignore', 'ignore', 'inherit'],
            }),
          );
        }
        await listening(options.adminUrl, dbName, count, workers);
        return now() - started;
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * Resolves once `count` connections to the database listen for delivery work (each worker's
 * wake-up connection), so that a measurement starts with every worker up, however long start-up
 * took.
 */
async function listening(adminUrl: string, dbName: string, count: number, workers: ChildProcess[]) {
  for (;;) {
    const exited = workers.find((w) => w.exitCode !== null);
    if (exited) throw new Error(`an eds worker exited with ${exited.exitCode} before listening`);
    const { rows } = await adminQuery(
      adminUrl,
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND query = 'LISTEN eds_webhook_deliveries'`,
      [dbName],
    );
    if (rows[0].n >= count) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

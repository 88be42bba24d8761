/**
 * Soak (`npm run soak`, not part of `npm test`): mixed API load at a fixed rate against
 * PostgreSQL (or SQLite: `--store sqlite`) for `--duration` seconds (default 600) while keys are
 * created and revoked and transcripts are finalized through `eds import`, with webhook delivery
 * on to a local receiver that verifies every signature. Passes when there is no 5xx, no event
 * goes undelivered, every revoked key is refused within a second, the server's RSS grows under
 * 10% after warm-up, and it exits 0 when stopped.
 * `--gc-pressure` runs the server with `--expose-gc` and a preload that, after every answer,
 * prepares and drops SQLite statements and asks for a collection outside JavaScript: the path on
 * which a SQLite binding built on node::ObjectWrap aborts the process on Node.js 24.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import pg from 'pg';
import { verifyWebhook } from '../../packages/sdk/src/webhooks/index.js';
import { eds, edsAsync, freePort, ROOT, startChild } from '../processes.js';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '600' },
    rate: { type: 'string', default: '300' },
    warmup: { type: 'string', default: '60' },
    store: { type: 'string', default: 'postgres' },
    'gc-pressure': { type: 'boolean', default: false },
  },
});
if (values.store !== 'postgres' && values.store !== 'sqlite') throw new Error('--store sqlite|postgres');
const GC_PRESSURE_PRELOAD = join(ROOT, 'packages/server/test/support/asyncGcPressure.mjs');
const DURATION = Number(values.duration);
const RATE = Number(values.rate);
const WARMUP = Math.min(Number(values.warmup), DURATION / 3);
const RESULTS = join(ROOT, 'bench', 'results');
mkdirSync(RESULTS, { recursive: true });

async function freshDatabase(): Promise<string> {
  rmSync(join(RESULTS, 'soak-data'), { recursive: true, force: true });
  mkdirSync(join(RESULTS, 'soak-data'), { recursive: true });
  if (values.store === 'sqlite') return join(RESULTS, 'soak-data', 'eds.sqlite');
  const adminUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query('DROP DATABASE IF EXISTS eds_soak WITH (FORCE)');
  await admin.query('CREATE DATABASE eds_soak');
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = '/eds_soak';
  return url.toString();
}

async function main() {
  const build = spawnSync('npm', ['run', 'build', '-w', 'packages/server'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('build failed');

  // The receiver: verifies as the contract's ten steps say, records event ids.
  const received = new Set<string>();
  let rejected = 0;
  let secret = '';
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      try {
        const { event } = verifyWebhook({ rawBody: Buffer.concat(chunks), headers: req.headers, secret });
        received.add(event.id);
        res.writeHead(204).end();
      } catch {
        rejected++;
        res.writeHead(401).end();
      }
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

  const port = await freePort();
  const env = {
    EDS_DATABASE_URL: await freshDatabase(),
    EDS_DATA_DIR: join(RESULTS, 'soak-data'),
    EDS_KEY_DIGEST_SECRET: 'soak-digest-secret-0123456789abcdef',
    EDS_MEDIA_SIGNING_SECRET: 'soak-media-secret-0123456789abcdef',
    EDS_PORT: String(port),
    EDS_MEDIA_PORT: String(await freePort()),
    EDS_LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
    EDS_WEBHOOKS_ENABLED: 'true',
    EDS_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    EDS_WEBHOOK_ALLOW_HTTP: 'true',
    EDS_WEBHOOK_RETRY_SCHEDULE: '1,2,5',
  };
  const demo = eds(['demo', '--encounters', '2000', '--seed', '3'], env);
  const org: string = demo.organization_id;
  const subscription = eds(['webhook', 'create', '--org', org, '--url', receiverUrl], env);
  secret = subscription.signing_secret;
  eds(
    [
      'webhook',
      'activate',
      subscription.subscription_id,
      '--routes',
      'encounter,document,transcript,audio',
      '--by',
      'soak',
      '--reference',
      'SOAK-1',
    ],
    env,
  );
  eds(['webhook', 'correlation', subscription.subscription_id, 'confirmed'], env);

  const gcFlags = values['gc-pressure'] ? ['--expose-gc', '--import', GC_PRESSURE_PRELOAD] : [];
  const server = await startChild(
    process.execPath,
    [...gcFlags, join(ROOT, 'packages/server/bin/eds.js'), 'serve', '--worker'],
    values.store === 'sqlite' ? { ...env, EDS_GC_PRESSURE_DB: env.EDS_DATABASE_URL } : env,
    () => true,
  );
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    if (
      await fetch(`${base}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const token: string = demo.api_key;
  const auth = { authorization: `Bearer ${token}` };
  const page: any = await (await fetch(`${base}/external/v1/encounters?limit=100`, { headers: auth })).json();
  const encounters: any[] = page.items;
  const paths = [
    '/external/v1/encounters?limit=50',
    '/external/v1/encounters?limit=20&offset=500&sort_order=asc',
    ...encounters.slice(0, 20).map((e) => `/external/v1/encounters/${e.encounter_id}`),
    ...encounters
      .slice(0, 20)
      .flatMap((e) =>
        e.documents.map((d: any) => `/external/v1/encounters/${e.encounter_id}/documents/${d.document_id}`),
      ),
  ];

  // Background churn: keys revoked, transcripts finalized.
  const revocationLatencies: number[] = [];
  let finalized = 0;
  let churning = true;
  const churn = (async () => {
    let n = 0;
    while (churning) {
      n++;
      const key = await edsAsync(
        ['key', 'create', '--org', org, '--scopes', 'encounters:read,patients:read,documents:read'],
        env,
      );
      const headers = { authorization: `Bearer ${key.token}` };
      await fetch(`${base}/external/v1/encounters?limit=1`, { headers });
      await edsAsync(['key', 'revoke', key.key_id], env);
      const t0 = Date.now();
      while ((await fetch(`${base}/external/v1/encounters?limit=1`, { headers })).status !== 401) {
        await new Promise((r) => setTimeout(r, 20));
      }
      revocationLatencies.push(Date.now() - t0);
      const encounter = encounters[n % encounters.length];
      const file = join(RESULTS, 'soak-data', `finalize-${n}.ndjson`);
      const doc = {
        kind: 'document',
        id: `doc_soak_${n}_${Date.now()}`,
        encounter_id: encounter.encounter_id,
        schema_type: 'ambient_transcript',
        title: 'Soak recording',
        status: 'completed',
        workflow_variant: 'ambient',
        created_at: new Date().toISOString(),
        updated_at: new Date().toISOString(),
        audio_duration_seconds: 3,
        transcript: {
          finalized: true,
          provider: 'soak-asr',
          audio_duration_seconds: 3,
          turns: [{ speaker: 'clinician', start: 0, end: 1, text: 'Soak.' }],
        },
      };
      writeFileSync(file, `${JSON.stringify(doc)}\n`);
      await edsAsync(['import', file], env);
      finalized++;
      await new Promise((r) => setTimeout(r, 2000));
    }
  })();

  // RSS samples every 5 s.
  const rss: { t: number; mb: number }[] = [];
  const started = Date.now();
  const sampler = setInterval(() => {
    try {
      const status = readFileSync(`/proc/${server.process.pid}/status`, 'utf8');
      rss.push({
        t: (Date.now() - started) / 1000,
        mb: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024,
      });
    } catch {}
  }, 5000);

  let i = 0;
  const result = await autocannon({
    url: base,
    connections: 16,
    overallRate: RATE,
    duration: DURATION,
    requests: [
      {
        method: 'GET',
        headers: auth,
        setupRequest: (req: any) => ({ ...req, path: paths[i++ % paths.length] }),
      },
    ],
  });
  churning = false;
  await churn;
  clearInterval(sampler);

  // Let the worker drain, then compare events with what the receiver verified.
  const eventIds = await eventReader(env.EDS_DATABASE_URL, org);
  let events: string[] = [];
  for (let t = 0; t < 60; t++) {
    events = await eventIds.read();
    if (events.every((id) => received.has(id))) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  await eventIds.close();
  await server.stop();
  const exitCode = server.process.exitCode;
  receiver.close();

  const lost = events.filter((id) => !received.has(id));
  const fiveXx = Object.entries(result.statusCodeStats ?? {})
    .filter(([code]) => code.startsWith('5'))
    .reduce((n, [, s]) => n + (s as { count: number }).count, 0);
  // One sample swings with the garbage collector; compare the mean of the first minute after
  // warm-up with the mean of the last minute.
  const afterWarmup = rss.filter((s) => s.t >= WARMUP);
  const mean = (samples: { mb: number }[]) => samples.reduce((a, s) => a + s.mb, 0) / (samples.length || 1);
  const lastT = afterWarmup.at(-1)?.t ?? 0;
  const rssStart = mean(afterWarmup.filter((s) => s.t < WARMUP + 60));
  const rssEnd = mean(afterWarmup.filter((s) => s.t > lastT - 60));
  const growth = rssStart ? (rssEnd - rssStart) / rssStart : 0;
  const summary = {
    duration_s: DURATION,
    rate: RATE,
    requests: result.requests.total,
    rps: result.requests.average,
    p99_ms: result.latency.p99,
    status_codes: result.statusCodeStats,
    five_xx: fiveXx,
    errors: result.errors,
    keys_revoked: revocationLatencies.length,
    revocation_ms_max: Math.max(...revocationLatencies),
    transcripts_finalized: finalized,
    events: events.length,
    delivered: events.length - lost.length,
    lost: lost.length,
    receiver_rejected: rejected,
    rss_mb_first_minute_after_warmup: Math.round(rssStart),
    rss_mb_last_minute: Math.round(rssEnd),
    rss_mb_max: Math.round(Math.max(...rss.map((s) => s.mb))),
    rss_growth_pct: Math.round(growth * 1000) / 10,
    store: values.store,
    gc_pressure: values['gc-pressure'],
    node: process.version,
    server_exit_code: exitCode,
  };
  writeFileSync(join(RESULTS, `soak-${Date.now()}.json`), JSON.stringify({ summary, rss }, null, 2));
  console.log(JSON.stringify(summary, null, 2));
  const ok =
    fiveXx === 0 &&
    lost.length === 0 &&
    rejected === 0 &&
    growth < 0.1 &&
    Math.max(...revocationLatencies) < 1000 &&
    exitCode === 0;
  console.log(ok ? 'SOAK PASSED' : 'SOAK FAILED');
  process.exit(ok ? 0 : 1);
}

/** The IDs of an organization's webhook events, read from either store. */
async function eventReader(url: string, org: string) {
  const query = 'SELECT id FROM webhook_events WHERE organization_id = ';
  if (values.store === 'sqlite') {
    const db = new Database(url, { readonly: true });
    const statement = db.prepare(`${query}?`).pluck();
    return { read: async () => statement.all(org) as string[], close: async () => db.close() };
  }
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  return {
    read: async () => (await db.query(`${query}$1`, [org])).rows.map((r) => r.id as string),
    close: () => db.end(),
  };
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

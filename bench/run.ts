/**
 * `npm run bench`: the service in production mode on a data set of N encounters, each route
 * driven by autocannon from this process, next to a raw node:http ceiling that answers the same
 * bytes under the same load. Reports req/s, p50/p99, the ratio to the ceiling and the server's
 * peak RSS. Options: --store sqlite|postgres --encounters N --connections C --duration S
 * --routes TEXT (only routes whose name contains it) --profile (run the service under
 * `--cpu-prof`: the profile is written to bench/results and summarized by self time; open the
 * file in Chrome DevTools or speedscope for the flame graph; profiling slows the service).
 * The route runs drive one key (and one address) at saturation, so they turn rate limits off;
 * the limiter is measured on its own afterwards (bench/rateLimits.ts; skip it with
 * --routes, select only it with --routes limiter). Redis: TEST_REDIS_URL, else 127.0.0.1:6379.
 * --baseline REF (also run the service as built from commit REF, on the same data, and measure
 * each route on both back to back: the cost of a change, A/B within one run). At the end, the
 * audit writer's sustained records/s (group commit, 64 waiting callers) on the same store.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { generateToken } from '../packages/server/src/auth/token.js';
import { measureAuditWriter } from './auditWriter.js';
import { baselineBuild, eds, freePort, ROOT, startChild, startEdsServer } from './processes.js';
import { summarizeProfile } from './profileSummary.js';
import { benchRateLimits, printRateLimits } from './rateLimits.js';

const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite' },
    encounters: { type: 'string', default: '10000' },
    connections: { type: 'string', default: '32' },
    duration: { type: 'string', default: '8' },
    routes: { type: 'string', default: '' },
    profile: { type: 'boolean', default: false },
    baseline: { type: 'string', default: '' },
  },
});
const N = Number(values.encounters);
const CONNECTIONS = Number(values.connections);
const DURATION = Number(values.duration);
const RESULTS = join(ROOT, 'bench', 'results');
mkdirSync(RESULTS, { recursive: true });

const SECRETS = {
  EDS_KEY_DIGEST_SECRET: 'bench-digest-secret-0123456789abcdef',
  EDS_MEDIA_SIGNING_SECRET: 'bench-media-secret-0123456789abcdef',
};

async function databaseUrl(): Promise<string> {
  if (values.store === 'sqlite') return join(RESULTS, `data-sqlite-${N}`, 'eds.sqlite');
  const admin = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `eds_bench_${N}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
}

interface Dataset {
  organizationId: string;
}

/** Builds the data set once (eds demo), then reuses it; a fresh key every run. */
function prepareDataset(env: Record<string, string>): Dataset & { token: string } {
  const marker = join(RESULTS, `dataset-${values.store}-${N}.json`);
  let dataset: Dataset;
  if (existsSync(marker)) {
    eds(['migrate'], env);
    dataset = JSON.parse(readFileSync(marker, 'utf8'));
  } else {
    const started = Date.now();
    const demo = eds(['demo', '--encounters', String(N), '--seed', '1'], env);
    console.error(`data set: ${N} encounters in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    dataset = { organizationId: demo.organization_id };
    writeFileSync(marker, JSON.stringify(dataset));
  }
  const key = eds(
    [
      'key',
      'create',
      '--org',
      dataset.organizationId,
      '--scopes',
      'encounters:read,patients:read,documents:read,recordings:read',
    ],
    env,
  );
  return { ...dataset, token: key.token };
}

interface Measured {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

async function load(url: string, token: string | undefined): Promise<Measured> {
  const headers = token ? { authorization: `Bearer ${token}` } : {};
  await autocannon({ url, connections: CONNECTIONS, duration: 1, headers });
  const r = await autocannon({ url, connections: CONNECTIONS, duration: DURATION, headers });
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors,
    non2xx: r.non2xx,
  };
}

async function main() {
  // Production runs the compiled output; build it so the numbers are for the current code.
  const build = spawnSync('npm', ['run', 'build', '-w', 'packages/server'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('build failed');
  const dbUrl = await databaseUrl();
  const port = await freePort();
  const mediaPort = await freePort();
  const env = {
    ...SECRETS,
    EDS_DATABASE_URL: dbUrl,
    EDS_DATA_DIR: join(RESULTS, `data-${values.store}-${N}`),
    EDS_PORT: String(port),
    EDS_MEDIA_PORT: String(mediaPort),
    EDS_LOG_LEVEL: process.env.EDS_LOG_LEVEL ?? 'warn',
    NODE_ENV: 'production',
    EDS_DB_POOL_SIZE: '16',
  };
  const data = prepareDataset(env);
  // One key and one address at saturation: with limits on, this would measure 429s.
  const routeEnv = { ...env, EDS_RATE_LIMIT_PER_KEY: '0', EDS_RATE_LIMIT_UNAUTHENTICATED: '0' };
  const profileDir = join(RESULTS, `profile-${values.store}-${N}-${Date.now()}`);
  const server = await startEdsServer(
    routeEnv,
    port,
    values.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
  );
  const base = `http://127.0.0.1:${port}`;
  let baseline: { url: string; stop(): Promise<void> } | undefined;
  if (values.baseline) {
    const bin = baselineBuild(values.baseline, RESULTS);
    const baselinePort = await freePort();
    const child = await startEdsServer(
      { ...env, EDS_PORT: String(baselinePort), EDS_MEDIA_PORT: String(await freePort()) },
      baselinePort,
      [],
      bin,
    );
    baseline = { url: `http://127.0.0.1:${baselinePort}`, stop: () => child.stop() };
  }
  const ex = await findExamples(base, data.token);
  const listUrl = '/external/v1/encounters?limit=50';
  const list: any = await (
    await fetch(`${base}${listUrl}&sort_order=asc`, { headers: { authorization: `Bearer ${data.token}` } })
  ).json();
  const first = list.items[0]?.created_at;
  const newest: any = await (
    await fetch(`${base}${listUrl}&sort_order=desc`, { headers: { authorization: `Bearer ${data.token}` } })
  ).json();
  const last = newest.items[0]?.created_at;
  const mid = new Date((Date.parse(first) + Date.parse(last)) / 2);
  const windowQuery = `&start_at=${encodeURIComponent(first)}&end_at=${encodeURIComponent(mid.toISOString())}`;
  const routes: [string, string, string | undefined][] = [
    ['list, offset 0', listUrl, data.token],
    ['list, offset 10000', `${listUrl}&offset=10000`, data.token],
    ['list, window, offset 0', `${listUrl}${windowQuery}`, data.token],
    ['list, window, offset 10000', `${listUrl}&offset=10000${windowQuery}`, data.token],
    ['encounter detail', `/external/v1/encounters/${ex.encounter_id}`, data.token],
    ['document detail', `/external/v1/encounters/${ex.encounter_id}/documents/${ex.document_id}`, data.token],
    [
      'transcript',
      `/external/v1/encounters/${ex.encounter_id}/documents/${ex.transcript_document_id}/transcript`,
      data.token,
    ],
    [
      'audio link',
      `/external/v1/encounters/${ex.encounter_id}/documents/${ex.transcript_document_id}/audio`,
      data.token,
    ],
    ['malformed key (401)', listUrl, malformedToken()],
    ['unknown key (401)', listUrl, unknownToken()],
  ];
  const selected = values.routes ? routes.filter(([name]) => name.includes(values.routes!)) : routes;
  const limiter = values.routes === '' || 'limiter'.includes(values.routes);

  // Record the real responses; the ceiling serves exactly these bytes.
  const recorded: Record<string, { status: number; contentType: string; body: string }> = {};
  for (const [name, path, token] of selected) {
    const r = await fetch(`${base}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    const body = await r.text();
    recorded[`/${encodeURIComponent(name)}`] = {
      status: r.status,
      contentType: r.headers.get('content-type') ?? '',
      body,
    };
    console.error(`${name}: ${r.status} ${body.length} bytes`);
  }
  const recordedFile = join(RESULTS, 'ceiling-responses.json');
  writeFileSync(recordedFile, JSON.stringify(recorded));

  console.error(
    `server peak RSS after start-up and setup requests: ${Math.round(server.peakRss() / 2 ** 20)} MB`,
  );
  // The ceiling runs beside the idle service, and each route is measured on both back to back:
  // this VM's speed drifts by tens of percent within minutes, so a ratio is only meaningful
  // between two measurements taken together.
  let ceilingPort = 0;
  const ceiling = await startChild(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'bench', 'ceiling.ts'), recordedFile],
    {},
    (line) => {
      ceilingPort = JSON.parse(line).port;
      return true;
    },
  );
  const rows: Record<string, unknown>[] = [];
  for (const [name, path, token] of selected) {
    const m = await load(`${base}${path}`, token);
    const b = baseline ? await load(`${baseline.url}${path}`, token) : undefined;
    const c = await load(`http://127.0.0.1:${ceilingPort}/${encodeURIComponent(name)}`, undefined);
    rows.push({
      route: name,
      status: recorded[`/${encodeURIComponent(name)}`]!.status,
      bytes: recorded[`/${encodeURIComponent(name)}`]!.body.length,
      ...m,
      ceiling_rps: c.rps,
      ratio: m.rps / c.rps,
      ...(b
        ? { baseline_rps: b.rps, baseline_p99: b.p99, cost: 1 - m.rps / b.rps, p99_added_ms: m.p99 - b.p99 }
        : {}),
      // The server's peak RSS so far: shows which route, if any, grows it.
      peak_rss_mb: Math.round(server.peakRss() / 2 ** 20),
    });
    console.error(
      `${name}: ${m.rps.toFixed(0)} req/s p50 ${m.p50} ms p99 ${m.p99} ms (ceiling ${c.rps.toFixed(0)}${b ? `, baseline ${b.rps.toFixed(0)} req/s p99 ${b.p99} ms` : ''}), peak RSS ${Math.round(server.peakRss() / 2 ** 20)} MB`,
    );
  }
  const peakRss = server.peakRss();
  await server.stop();
  await baseline?.stop();
  await ceiling.stop();
  const rateLimits = limiter
    ? await benchRateLimits({
        env,
        organizationId: data.organizationId,
        encounterId: ex.encounter_id,
        redisUrl: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
        connections: CONNECTIONS,
        duration: DURATION,
      })
    : undefined;
  const writer = await measureAuditWriter(dbUrl, 64, DURATION);

  const report = {
    when: new Date().toISOString(),
    store: values.store,
    encounters: N,
    connections: CONNECTIONS,
    duration_s: DURATION,
    machine: {
      cpus: cpus().length,
      model: cpus()[0]?.model,
      memory_gb: Math.round(totalmem() / 2 ** 30),
      node: process.version,
    },
    server_peak_rss_mb: Math.round(peakRss / 2 ** 20),
    baseline: values.baseline || undefined,
    rows,
    rate_limits: rateLimits,
    audit_writer: writer,
  };
  const file = join(RESULTS, `bench-${values.store}-${N}-${Date.now()}.json`);
  writeFileSync(file, JSON.stringify(report, null, 2));
  console.log(
    `\n${values.store}, ${N.toLocaleString('en-US')} encounters, ${CONNECTIONS} connections, ${DURATION} s per route; server peak RSS ${report.server_peak_rss_mb} MB`,
  );
  console.log('| route | status | req/s | p50 ms | p99 ms | ceiling req/s | ratio | peak RSS so far |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of rows as any[]) {
    console.log(
      `| ${r.route} | ${r.status} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.ceiling_rps.toFixed(0)} | ${(r.ratio * 100).toFixed(0)}% | ${r.peak_rss_mb} MB |`,
    );
  }
  if (rateLimits) printRateLimits(rateLimits);
  if (values.baseline) {
    console.log(`\nagainst the service built from ${values.baseline}, measured back to back:`);
    console.log(
      '| route | req/s | baseline req/s | throughput cost | p99 ms | baseline p99 ms | p99 added |',
    );
    console.log('|---|---|---|---|---|---|---|');
    for (const r of rows as any[]) {
      console.log(
        `| ${r.route} | ${r.rps.toFixed(0)} | ${r.baseline_rps.toFixed(0)} | ${(r.cost * 100).toFixed(1)}% | ${r.p99} | ${r.baseline_p99} | ${r.p99_added_ms} ms |`,
      );
    }
  }
  console.log('\naudit writer, group commit, 64 callers each waiting for its record:');
  console.log('| shape | records/s | disclosure rows/s | mean records per commit |');
  console.log('|---|---|---|---|');
  for (const w of writer) {
    console.log(`| ${w.shape} | ${w.records_per_s} | ${w.disclosure_rows_per_s} | ${w.mean_group} |`);
  }
  console.log(`\nwritten: ${file}`);
  if (values.profile) {
    for (const name of readdirSync(profileDir)) {
      console.log(`\nCPU profile of the service (all routes of this run): ${join(profileDir, name)}`);
      console.log('("(idle)" includes the service waiting while the ceiling was measured)');
      console.log(summarizeProfile(readFileSync(join(profileDir, name), 'utf8')));
    }
  }
}

/** An encounter with a note and an ambient transcript whose transcript and audio both answer 200. */
async function findExamples(base: string, token: string) {
  const get = async (path: string) =>
    fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const page: any = await (await get('/external/v1/encounters?limit=100')).json();
  for (const encounter of page.items) {
    const note = encounter.documents.find((d: any) => d.schema_type === 'document');
    for (const doc of encounter.documents.filter((d: any) => d.schema_type === 'ambient_transcript')) {
      const base = `/external/v1/encounters/${encounter.encounter_id}/documents/${doc.document_id}`;
      if (note && (await get(`${base}/transcript`)).ok && (await get(`${base}/audio`)).ok) {
        return {
          encounter_id: encounter.encounter_id,
          document_id: note.document_id,
          transcript_document_id: doc.document_id,
        };
      }
    }
  }
  throw new Error('no encounter with a note, a transcript and audio in the first 100');
}

/** The shape of a live key with a checksum that cannot match: refused before any store read. */
function malformedToken(): string {
  return `eds_live_${'0'.repeat(37)}A`;
}

/** A well-formed token (valid checksum) that was never issued: one indexed lookup each. */
function unknownToken(): string {
  return generateToken('live');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

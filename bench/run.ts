/**
 * `npm run bench`: the service in production mode on a data set of N encounters, each route
 * driven by wrk (bench/wrk.ts, a separate process whose own CPU use is reported, so it is shown
 * not to be the bottleneck), next to a raw node:http ceiling that answers the same bytes under
 * the same load, and bare Fastify answering them too (the framework floor). Reports req/s,
 * p50/p99 and the slowest single answer (max), the ratio to the ceiling, the framework floor's
 * ratio and the server's peak RSS.
 *
 * Options: --store sqlite|postgres --encounters N --connections C --duration S
 * --routes TEXT (only the parts whose name contains it, or one of its |-separated texts: the routes
 *   below, "limiter", "audit writer", "webhooks";
 *   "list, a new page each time" walks the pages so that no answer repeats a set of patients)
 * --before PATH|COMMIT (other code: a checkout such as a worktree of main, or a commit of this
 *   repository, built by `git archive` beside the results; its server is measured on the same
 *   data set in the same run, route by route back to back with this one and the ceiling; the
 *   data set is built by its `eds demo` and this code's copy of it by `eds migrate`, which is timed)
 * --before-node PATH (the Node.js binary that runs the --before code: a runtime upgrade measured
 *   old runtime and its installed dependencies against this one, in the same run)
 * --threads (each server thread's share of the measured run on a CPU and waiting for one:
 *   bench/threadTimes.ts)
 * --audit-groups (the durable audit's group commits during each measured run, from the service's
 *   metrics on an admin port: records a group, a group's round from hand-over to its answer, and
 *   the share of the run a group was in flight: bench/auditGroups.ts)
 * --stalls (bench/stallProbe.mjs in each server: event-loop delay, GC pauses and SQLite calls of
 *   5 ms or more, per route)
 * --rounds N (measure each route N times, alternating which server goes first, and report each
 *   side's median: the way to compare two versions on this VM, whose speed drifts; the limiter's
 *   cost runs 12 × N rounds)
 * --profile (run the service under `--cpu-prof`: the profile is written to bench/results and
 *   summarized by self time; profiling slows the service).
 *
 * The route runs drive one key (and one address) at saturation, so they turn rate limits off.
 * After them come the rate limiter on its own (bench/rateLimits.ts: its cost on the detail route,
 * off / in-process / Redis in turns, and one key flooding beside a quiet one; Redis:
 * TEST_REDIS_URL, else 127.0.0.1:6379) and the audit writer's sustained records/s (group commit,
 * 64 waiting callers, bench/auditWriter.ts), both on this code's data set. Last, one import's
 * burst of webhook events (bench/webhooks/importBurst.ts; PostgreSQL from TEST_DATABASE_URL
 * whatever --store says; --webhook-events N, default 1000), with --before alternating with that
 * code's workers.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { generateToken } from '../packages/server/src/auth/token.js';
import { type AuditGroups, auditGroups, auditGroupTotals, describeAuditGroups } from './auditGroups.js';
import { measureAuditWriter, type WriterThroughput } from './auditWriter.js';
import {
  ADMIN_URL,
  adminQuery,
  windowQuery as benchWindow,
  buildDataset as buildPlaceDataset,
  type Dataset,
  type DatasetPlace,
  datasetEnv,
  datasetLocation,
  MALFORMED_TOKEN,
  mintKey,
} from './datasets.js';
import { listPageWalk } from './listPageWalk.js';
import {
  beforeRoot,
  buildServer,
  type Child,
  eds,
  nodeFor,
  ROOT,
  runCheckoutOn,
  startCeiling,
  startEdsServer,
  startFrameworkFloor,
} from './processes.js';
import { summarizeProfile } from './profileSummary.js';
import { benchRateLimits, type LimiterBenchResult, printRateLimits } from './rateLimits.js';
import { type ThreadShare, threadShares, threadTimes } from './threadTimes.js';
import { type BurstSide, benchImportBurst, printImportBurst } from './webhooks/importBurst.js';
import { createWrk, type PathWalk, type WrkResult } from './wrk.js';

const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite' },
    encounters: { type: 'string', default: '10000' },
    connections: { type: 'string', default: '32' },
    duration: { type: 'string', default: '10' },
    routes: { type: 'string', default: '' },
    before: { type: 'string' },
    'before-node': { type: 'string' },
    stalls: { type: 'boolean', default: false },
    threads: { type: 'boolean', default: false },
    'audit-groups': { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    rounds: { type: 'string', default: '1' },
    'webhook-events': { type: 'string', default: '1000' },
  },
});
const N = Number(values.encounters);
const CONNECTIONS = Number(values.connections);
/**
 * wrk's CPU share (one thread), in percent, from which a ceiling may be wrk's limit rather than the
 * bare server's.
 */
const WRK_NEAR_ITS_LIMIT = 80;
const DURATION = Number(values.duration);
const ROUNDS = Math.max(1, Number(values.rounds));
const RESULTS = join(ROOT, 'bench', 'results');
mkdirSync(RESULTS, { recursive: true });
const BEFORE = values.before ? beforeRoot(values.before, RESULTS) : undefined;
if (BEFORE && values['before-node']) runCheckoutOn(BEFORE, values['before-node']);
/** Whether a part of the run is selected by --routes (by name, as the routes are). */
const selects = (name: string) =>
  !values.routes || values.routes.split('|').some((text) => name.includes(text));

const PLACE: DatasetPlace = { store: values.store, encounters: N, results: RESULTS };
const location = (label: string) => datasetLocation(PLACE, label);
const envFor = (label: string) => datasetEnv(PLACE, label);
const buildDataset = (label: string, env: Record<string, string>, root: string) =>
  buildPlaceDataset(PLACE, label, env, root);

/**
 * This code's copy of the before data set, upgraded by this code's `eds migrate` (timed: for the
 * read model, that is the backfill of every stored answer).
 */
async function copyDataset(env: Record<string, string>): Promise<Dataset & { migrateSeconds?: number }> {
  const from = location('before');
  const to = location('after');
  if (existsSync(to.marker)) {
    eds(['migrate'], env);
    return JSON.parse(readFileSync(to.marker, 'utf8'));
  }
  if (values.store === 'sqlite') {
    rmSync(to.dataDir, { recursive: true, force: true });
    cpSync(from.dataDir, to.dataDir, { recursive: true });
  } else {
    await adminQuery(`DROP DATABASE IF EXISTS ${to.dbName}`);
    await adminQuery(`CREATE DATABASE ${to.dbName} TEMPLATE ${from.dbName}`);
    // The demo's recordings live in the data directory's media folder.
    rmSync(to.dataDir, { recursive: true, force: true });
    cpSync(from.dataDir, to.dataDir, { recursive: true });
  }
  const started = Date.now();
  eds(['migrate'], env);
  const migrateSeconds = (Date.now() - started) / 1000;
  console.error(`eds migrate of the copy with this code: ${migrateSeconds.toFixed(1)} s`);
  const dataset = { ...JSON.parse(readFileSync(from.marker, 'utf8')), migrateSeconds };
  writeFileSync(to.marker, JSON.stringify(dataset));
  return dataset;
}

interface Side {
  label: string;
  root: string;
  base: string;
  token: string;
  server: Child;
  stallFile: string;
  /** The admin listener's base URL, with --audit-groups. */
  admin?: string;
}

async function startSide(label: string, root: string, dataset: () => Promise<Dataset>): Promise<Side> {
  // The code compared with was built by beforeRoot.
  if (root === ROOT) buildServer(root);
  const env = envFor(label);
  const data = await dataset.call(null);
  const token = mintKey(data.organizationId, env, root);
  const stallFile = join(RESULTS, `stalls-${label || 'this'}.json`);
  const flags: string[] = [];
  if (values.profile) flags.push('--cpu-prof', `--cpu-prof-dir=${profileDir}`);
  if (values.stalls) flags.push('--import', join(ROOT, 'bench', 'stallProbe.mjs'));
  const server = await startEdsServer(
    {
      ...env,
      EDS_BENCH_STALL_FILE: stallFile,
      EDS_BENCH_SERVER_PACKAGE: join(root, 'packages', 'server', 'package.json'),
    },
    flags,
    root,
    undefined,
    undefined,
    values['audit-groups'],
  );
  started.push(server);
  const admin = server.adminPort === undefined ? undefined : `http://127.0.0.1:${server.adminPort}`;
  return { label, root, base: `http://127.0.0.1:${server.port}`, token, server, stallFile, admin };
}

/** The measurement with the median req/s (the upper one of an even count). */
function medianByRps(results: WrkResult[]): WrkResult {
  return [...results].sort((x, y) => x.rps - y.rps)[Math.floor(results.length / 2)]!;
}

/** Each server walks the list's pages from its own start, continuing across rounds. */
function newPageWalks(sides: Side[]): Map<Side, PathWalk> {
  const walk = listPageWalk(N, RESULTS);
  return new Map(sides.map((side) => [side, { ...walk }]));
}

/** Every server this run started, stopped however the run ends. */
const started: Child[] = [];

const profileDir = join(RESULTS, `profile-${values.store}-${N}-${Date.now()}`);

/** A route's run on one server, with what --stalls, --threads and --audit-groups found meanwhile. */
type Measured = WrkResult & { stalls?: unknown; threads?: ThreadShare[]; auditGroups?: AuditGroups };

/**
 * Runs the route on one server after a second's warm-up; with --stalls, --threads and
 * --audit-groups, what they saw.
 */
async function measureOn(
  side: Side,
  wrk: ReturnType<typeof createWrk>,
  path: string,
  auth: 'key' | string | undefined,
  walk?: PathWalk,
): Promise<Measured> {
  const token = auth === 'key' ? side.token : auth;
  const url = `${side.base}${path}`;
  const pid = side.server.process.pid!;
  if (values.stalls) side.server.process.kill('SIGUSR2');
  await wrk.run(url, token, 1, walk);
  // The metrics are read before the threads' times start, so the scrape is not counted in them.
  const groupsBefore = side.admin ? await auditGroupTotals(side.admin) : undefined;
  const threadsBefore = values.threads ? threadTimes(pid) : undefined;
  const m: Measured = await wrk.run(url, token, DURATION, walk);
  if (threadsBefore) m.threads = threadShares(threadsBefore, threadTimes(pid), m.requests / m.rps);
  if (groupsBefore)
    m.auditGroups = auditGroups(groupsBefore, await auditGroupTotals(side.admin!), m.requests / m.rps);
  if (!values.stalls) return m;
  rmSync(side.stallFile, { force: true });
  side.server.process.kill('SIGUSR2');
  for (let i = 0; i < 50 && !existsSync(side.stallFile); i++) await new Promise((r) => setTimeout(r, 100));
  return { ...m, stalls: JSON.parse(readFileSync(side.stallFile, 'utf8')) };
}

function machine() {
  return {
    cpus: cpus().length,
    model: cpus()[0]?.model,
    memory_gb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
  };
}

/** The routes, in the order they are measured. */
const ROUTE_NAMES = [
  'list, offset 0',
  'list, a new page each time',
  'list, offset 10000',
  'list, window, offset 0',
  'list, window, offset 10000',
  'encounter detail',
  'document detail',
  'transcript',
  'audio link',
  'malformed key (401)',
  'unknown key (401)',
] as const;
type RouteName = (typeof ROUTE_NAMES)[number];

async function main() {
  if ([...ROUTE_NAMES, 'limiter', 'audit writer'].some(selects)) await measureOnDataset();
  if (selects('webhooks')) await measureWebhooks();
}

/** The routes, the limiter and the audit writer: the parts that run on the data set. */
async function measureOnDataset() {
  const after = await startSide(BEFORE ? 'after' : '', ROOT, async () => {
    if (!BEFORE) return buildDataset('', envFor(''), ROOT);
    await buildDataset('before', envFor('before'), BEFORE);
    return copyDataset(envFor('after'));
  });
  const before = BEFORE
    ? await startSide('before', BEFORE, () => buildDataset('before', envFor('before'), BEFORE))
    : undefined;
  const migrateSeconds = BEFORE
    ? (JSON.parse(readFileSync(location('after').marker, 'utf8')).migrateSeconds as number | undefined)
    : undefined;
  const sides = before ? [before, after] : [after];

  const base = after.base;
  const ex = await findExamples(base, after.token);
  const listUrl = '/external/v1/encounters?limit=50';
  const windowQuery = await benchWindow((path) =>
    fetch(`${base}${path}`, { headers: { authorization: `Bearer ${after.token}` } }),
  );
  const paths: Record<RouteName, [string, 'key' | string]> = {
    'list, offset 0': [listUrl, 'key'],
    // Walks the pages instead (recorded, and served by the ceiling, as the first page).
    'list, a new page each time': [listUrl, 'key'],
    'list, offset 10000': [`${listUrl}&offset=10000`, 'key'],
    'list, window, offset 0': [`${listUrl}${windowQuery}`, 'key'],
    'list, window, offset 10000': [`${listUrl}&offset=10000${windowQuery}`, 'key'],
    'encounter detail': [`/external/v1/encounters/${ex.encounter_id}`, 'key'],
    'document detail': [`/external/v1/encounters/${ex.encounter_id}/documents/${ex.document_id}`, 'key'],
    transcript: [
      `/external/v1/encounters/${ex.encounter_id}/documents/${ex.transcript_document_id}/transcript`,
      'key',
    ],
    'audio link': [
      `/external/v1/encounters/${ex.encounter_id}/documents/${ex.transcript_document_id}/audio`,
      'key',
    ],
    'malformed key (401)': [listUrl, MALFORMED_TOKEN],
    'unknown key (401)': [listUrl, unknownToken()],
  };
  const routes = ROUTE_NAMES.map((name) => [name, ...paths[name]] as const);
  const selected = routes.filter(([name]) => selects(name));
  const newPages = newPageWalks(sides);

  // Record the real responses; the ceiling serves exactly these bytes.
  const recorded: Record<string, { status: number; contentType: string; body: string }> = {};
  for (const [name, path, auth] of selected) {
    const token = auth === 'key' ? after.token : auth;
    const r = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
    const body = await r.text();
    recorded[recordedPath(name)] = {
      status: r.status,
      contentType: r.headers.get('content-type') ?? '',
      body,
    };
    console.error(`${name}: ${r.status} ${Buffer.byteLength(body)} bytes`);
  }
  const recordedFile = join(RESULTS, 'ceiling-responses.json');
  writeFileSync(recordedFile, JSON.stringify(recorded));
  for (const side of sides) {
    console.error(
      `${side.label || 'server'} peak RSS after start-up: ${Math.round(side.server.peakRss() / 2 ** 20)} MB`,
    );
  }
  // The ceiling runs beside the idle services, and each route is measured on each server and the
  // ceiling back to back: this VM's speed drifts by tens of percent within minutes, so a ratio or
  // a before/after comparison is only meaningful between measurements taken together.
  const ceiling = await startCeiling(recordedFile);
  started.push(ceiling);
  // Bare Fastify on the same bytes: how much of the gap to the ceiling is the framework's.
  const floor = await startFrameworkFloor(recordedFile);
  started.push(floor);
  const wrk = createWrk(RESULTS, CONNECTIONS);
  const rows: any[] = [];
  for (const [name, path, auth] of selected) {
    const key = recordedPath(name);
    // Rounds alternate which server goes first, so neither gains from the other's warm-up, and
    // the median of each side is reported (the VM's speed drifts between runs).
    const turns: { b?: WrkResult; a: WrkResult; c: WrkResult; f: WrkResult }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      let b: WrkResult | undefined;
      let a: WrkResult;
      const walk = (side: Side) => (name === 'list, a new page each time' ? newPages.get(side) : undefined);
      if (before && round % 2 === 1) {
        a = await measureOn(after, wrk, path, auth, walk(after));
        b = await measureOn(before, wrk, path, auth, walk(before));
      } else {
        b = before ? await measureOn(before, wrk, path, auth, walk(before)) : undefined;
        a = await measureOn(after, wrk, path, auth, walk(after));
      }
      const c = await wrk.measure(`http://127.0.0.1:${ceiling.port}${key}`, undefined, DURATION);
      const f = await wrk.measure(`http://127.0.0.1:${floor.port}${key}`, undefined, DURATION);
      turns.push({ b, a, c, f });
      if (ROUNDS > 1)
        console.error(
          `${name}, round ${round + 1}: ${b ? `before ${b.rps.toFixed(0)} | ` : ''}now ${a.rps.toFixed(0)} | ceiling ${c.rps.toFixed(0)} | Fastify floor ${f.rps.toFixed(0)} req/s`,
        );
    }
    const b = before ? medianByRps(turns.map((t) => t.b!)) : undefined;
    const a = medianByRps(turns.map((t) => t.a));
    const c = medianByRps(turns.map((t) => t.c));
    const f = medianByRps(turns.map((t) => t.f));
    const row = {
      route: name,
      status: recorded[key]!.status,
      bytes: Buffer.byteLength(recorded[key]!.body),
      ...(b ? { before: b } : {}),
      after: a,
      ceiling: c,
      ratio: a.rps / c.rps,
      framework_floor: f,
      framework_ratio: f.rps / c.rps,
      ...(ROUNDS > 1 ? { rounds: turns } : {}),
      peak_rss_mb: Math.round(after.server.peakRss() / 2 ** 20),
      ...(before ? { before_peak_rss_mb: Math.round(before.server.peakRss() / 2 ** 20) } : {}),
    };
    rows.push(row);
    const fmt = (m: WrkResult) =>
      `${m.rps.toFixed(0)} req/s p50 ${m.p50.toFixed(1)} p99 ${m.p99.toFixed(1)} max ${m.max.toFixed(1)} ms (wrk ${m.wrkCpu.toFixed(0)}% cpu)`;
    console.error(
      `${name}: ${b ? `before ${fmt(b)} | ` : ''}now ${fmt(a)} | ceiling ${fmt(c)} | Fastify floor ${fmt(f)}; peak RSS ${row.peak_rss_mb} MB`,
    );
    for (const [side, m] of [
      ['before', b],
      ['now', a],
    ] as const) {
      if (m && row.status < 300 && m.non2xx > 0)
        console.error(`  ! ${side}: ${m.non2xx} answers were not 2xx/3xx`);
      if (m && m.errors > 0) console.error(`  ! ${side}: ${m.errors} socket errors or timeouts`);
    }
  }
  for (const [side, walk] of newPages) {
    const pages = readFileSync(walk.file, 'utf8').split('\n').length - 1;
    if (walk.next > pages)
      console.error(
        `  ! ${side.label || 'server'}: the walk of new pages went round (${walk.next} requests, ${pages} pages): later pages repeated`,
      );
  }
  const peakRss = after.server.peakRss();
  const beforePeakRss = before?.server.peakRss();
  for (const side of sides) await side.server.stop();
  await ceiling.stop();
  await floor.stop();

  const afterLabel = BEFORE ? 'after' : '';
  const ownEnv = envFor(afterLabel);
  // The limiter's runs set their own limits (the deployment's defaults unless they say otherwise).
  const { EDS_RATE_LIMIT_PER_KEY: _perKey, EDS_RATE_LIMIT_UNAUTHENTICATED: _unkeyed, ...limiterEnv } = ownEnv;
  const rateLimits: LimiterBenchResult | undefined = selects('limiter')
    ? await benchRateLimits({
        env: limiterEnv,
        organizationId: organizationIdOf(afterLabel),
        encounterId: ex.encounter_id,
        redisUrl: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
        wrk,
        duration: DURATION,
        costRounds: 12 * ROUNDS,
        ...(BEFORE ? { beforeRoot: BEFORE } : {}),
      })
    : undefined;
  const auditWriter: WriterThroughput[] | undefined = selects('audit writer')
    ? await measureAuditWriter(ownEnv.EDS_DATABASE_URL!, 64, DURATION)
    : undefined;

  const report = {
    when: new Date().toISOString(),
    store: values.store,
    encounters: N,
    connections: CONNECTIONS,
    duration_s: DURATION,
    rounds: ROUNDS,
    load_generator: 'wrk, 1 thread',
    machine: machine(),
    ...(migrateSeconds !== undefined ? { migrate_seconds: migrateSeconds } : {}),
    server_peak_rss_mb: Math.round(peakRss / 2 ** 20),
    ...(beforePeakRss !== undefined ? { before_peak_rss_mb: Math.round(beforePeakRss / 2 ** 20) } : {}),
    rows,
    ...(rateLimits ? { rate_limits: rateLimits } : {}),
    ...(auditWriter ? { audit_writer: auditWriter } : {}),
  };
  const file = join(RESULTS, `bench-${values.store}-${N}-${Date.now()}.json`);
  writeFileSync(file, JSON.stringify(report, null, 2));
  console.log(
    `\n${values.store}, ${N.toLocaleString('en-US')} encounters, ${CONNECTIONS} connections, ${DURATION} s per route, wrk (1 thread); server peak RSS ${report.server_peak_rss_mb} MB${before ? ` (before: ${report.before_peak_rss_mb} MB)` : ''}`,
  );
  const cells = (m: WrkResult) => `${m.rps.toFixed(0)} | ${m.p99.toFixed(1)} | ${m.max.toFixed(0)}`;
  if (before) {
    console.log(
      '| route | status | before req/s | p99 ms | max ms | now req/s | p99 ms | max ms | now vs before | ceiling req/s | ratio now (before) | Fastify floor ratio | wrk cpu on ceiling |',
    );
    console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const r of rows) {
      const change = (r.after.rps / r.before.rps - 1) * 100;
      console.log(
        `| ${r.route} | ${r.status} | ${cells(r.before)} | ${cells(r.after)} | ${change >= 0 ? '+' : ''}${change.toFixed(0)}% | ${r.ceiling.rps.toFixed(0)} | ${(r.ratio * 100).toFixed(0)}% (${((r.before.rps / r.ceiling.rps) * 100).toFixed(0)}%) | ${(r.framework_ratio * 100).toFixed(0)}% | ${r.ceiling.wrkCpu.toFixed(0)}% |`,
      );
    }
  } else {
    console.log(
      '| route | status | req/s | p50 ms | p99 ms | max ms | ceiling req/s | ratio | Fastify floor req/s | floor ratio | wrk cpu on ceiling | peak RSS so far |',
    );
    console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const r of rows) {
      console.log(
        `| ${r.route} | ${r.status} | ${r.after.rps.toFixed(0)} | ${r.after.p50.toFixed(1)} | ${r.after.p99.toFixed(1)} | ${r.after.max.toFixed(0)} | ${r.ceiling.rps.toFixed(0)} | ${(r.ratio * 100).toFixed(0)}% | ${r.framework_floor.rps.toFixed(0)} | ${(r.framework_ratio * 100).toFixed(0)}% | ${r.ceiling.wrkCpu.toFixed(0)}% | ${r.peak_rss_mb} MB |`,
      );
    }
  }
  // A ceiling wrk could not drive further is wrk's limit, not Node.js's: it reads low, and the
  // ratio against it reads high. One thread near a whole CPU is that point.
  const loadBound = rows.filter((r) => r.ceiling.wrkCpu >= WRK_NEAR_ITS_LIMIT);
  if (loadBound.length > 0) {
    console.log(
      `\nwrk used ${WRK_NEAR_ITS_LIMIT} % of a CPU or more against the ceiling of ${loadBound
        .map((r) => `${r.route} (${r.ceiling.wrkCpu.toFixed(0)} %)`)
        .join(', ')}: that ceiling may be wrk's limit, and the ratio then reads high`,
    );
  }
  /** One line per route and server for what `describe` finds in its measurement. */
  const perServer = (title: string, describe: (m: Measured) => string | undefined) => {
    console.log(`\n${title}`);
    for (const r of rows) {
      for (const [label, m] of [
        ['before', r.before],
        ['now', r.after],
      ] as const) {
        const text = m && describe(m);
        if (text) console.log(`${r.route} [${label}]: ${text}`);
      }
    }
  };
  if (values.stalls) {
    perServer(
      'What blocked the event loop, per route (loop delay max/p99; GC pauses; SQLite calls ≥ 5 ms):',
      (m) => (m.stalls ? JSON.stringify(m.stalls) : undefined),
    );
  }
  if (values.threads) {
    perServer('Each server thread during the measured run: % on a CPU (% waiting for one):', (m) =>
      m.threads?.map((t) => `${t.thread} ${t.cpu.toFixed(0)} % (${t.runQueue.toFixed(0)} %)`).join(', '),
    );
  }
  if (values['audit-groups']) {
    perServer(
      "The durable audit's group commits during the measured run: records a group, a group's round, share of the run a group was in flight:",
      (m) => m.auditGroups && describeAuditGroups(m.auditGroups),
    );
  }
  if (rateLimits) printRateLimits(rateLimits);
  if (auditWriter) {
    console.log('\nAudit writer, group commit, 64 callers each waiting for its record:');
    console.log('| shape | records/s | disclosure rows/s | mean records per commit |');
    console.log('|---|---:|---:|---:|');
    for (const w of auditWriter) {
      console.log(`| ${w.shape} | ${w.records_per_s} | ${w.disclosure_rows_per_s} | ${w.mean_group} |`);
    }
  }
  console.log(`\nwritten: ${file}`);
  if (values.profile) {
    for (const name of readdirSync(profileDir)) {
      console.log(`\nCPU profile of a service (all routes of this run): ${join(profileDir, name)}`);
      console.log('("(idle)" includes the service waiting while the ceiling was measured)');
      console.log(summarizeProfile(readFileSync(join(profileDir, name), 'utf8')));
    }
  }
}

/**
 * One import's burst of webhook events on PostgreSQL (whatever --store says): two worker
 * processes, directly and through a forward proxy; with --before, that code's workers too.
 */
async function measureWebhooks() {
  const sides: BurstSide[] = [
    ...(BEFORE ? [{ label: 'before' as const, root: BEFORE, node: nodeFor(BEFORE) }] : []),
    { label: '' as const, root: ROOT, node: process.execPath },
  ];
  const result = await benchImportBurst({
    sides,
    adminUrl: ADMIN_URL,
    events: Number(values['webhook-events']),
    workers: 2,
    rounds: ROUNDS,
  });
  const file = join(RESULTS, `bench-webhooks-${Date.now()}.json`);
  writeFileSync(
    file,
    JSON.stringify({ when: new Date().toISOString(), machine: machine(), ...result }, null, 2),
  );
  printImportBurst(result);
  console.log(`\nwritten: ${file}`);
}

/** The organization of a data set built earlier in this run. */
function organizationIdOf(label: string): string {
  return (JSON.parse(readFileSync(location(label).marker, 'utf8')) as Dataset).organizationId;
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

/**
 * The path the ceiling and the framework floor answer a route's recorded bytes on: its name in
 * letters, digits and dashes, which every router takes literally.
 */
function recordedPath(name: string): string {
  return `/${name.replace(/[^a-z0-9]+/gi, '-').replace(/-$/, '')}`;
}

/** A well-formed token (valid checksum) that was never issued: one indexed lookup each. */
function unknownToken(): string {
  return generateToken('live');
}

main().catch(async (error) => {
  console.error(error);
  // A failed run must not leave its servers behind (they hold the data sets open).
  await Promise.all(started.map((child) => child.stop()));
  process.exit(1);
});

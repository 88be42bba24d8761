/**
 * `npm run bench:request-cost`: where one request's time goes, by stage, in µs, for the 401 of a
 * malformed key, an encounter detail and a list page, on each store.
 *
 * 1. Under load: for each store and route, the service in production mode (built from this
 *    checkout) runs alone under `--cpu-prof` while wrk drives that one route; the samples taken
 *    while wrk ran are charged to stages (bench/stageProfile.ts) and divided by the requests
 *    wrk counted. Profiling slows the service by some percent; the stages keep their shares.
 * 2. In isolation: each stage's real code called directly in this process, many iterations,
 *    median of rounds (bench/stageTimings.ts).
 *
 * Options: --stores sqlite,postgres --encounters N --connections C --duration S
 *   --skip-profile / --skip-stages (one part only).
 * Data sets are those of `npm run bench` (bench/datasets.ts), built on first use; PostgreSQL is
 * the server of TEST_DATABASE_URL.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildDataset, type DatasetPlace, datasetEnv, MALFORMED_TOKEN, mintKey } from './datasets.js';
import { buildServer, type Child, ROOT, startCeiling, startEdsServer } from './processes.js';
import { STAGES, type StageCost, stageCost } from './stageProfile.js';
import { type StageTiming, timeStages } from './stageTimings.js';
import { createWrk } from './wrk.js';

const { values } = parseArgs({
  options: {
    stores: { type: 'string', default: 'sqlite,postgres' },
    encounters: { type: 'string', default: '100000' },
    connections: { type: 'string', default: '32' },
    duration: { type: 'string', default: '5' },
    'skip-profile': { type: 'boolean', default: false },
    'skip-stages': { type: 'boolean', default: false },
  },
});
const N = Number(values.encounters);
const CONNECTIONS = Number(values.connections);
const DURATION = Number(values.duration);
const RESULTS = join(ROOT, 'bench', 'results');
mkdirSync(RESULTS, { recursive: true });

interface RouteCost {
  route: string;
  rps: number;
  cost: StageCost;
  /** µs per request of the service's other threads (the SQLite audit writer, V8's). */
  otherThreads: number;
}

const nowUs = () => Number(process.hrtime.bigint() / 1000n);

async function firstEncounter(base: string, token: string): Promise<string> {
  const page: any = await (
    await fetch(`${base}/external/v1/encounters?limit=1`, { headers: { authorization: `Bearer ${token}` } })
  ).json();
  return page.items[0].encounter_id;
}

interface Profiled {
  rps: number;
  cost: StageCost;
  otherThreads: number;
}

/**
 * Starts a process under `--cpu-prof`, drives `path` for the duration after a warm-up, stops it
 * and charges the samples taken meanwhile to stages.
 */
async function profileUnderLoad(
  wrk: ReturnType<typeof createWrk>,
  start: (profileFlags: string[]) => Promise<Child & { base: string }>,
  path: string,
  auth: string | undefined,
): Promise<Profiled> {
  const dir = join(RESULTS, `request-cost-${Date.now()}`);
  const child = await start(['--cpu-prof', `--cpu-prof-dir=${dir}`]);
  try {
    const url = `${child.base}${path}`;
    await wrk.run(url, auth, 2);
    const from = nowUs();
    const m = await wrk.run(url, auth, DURATION);
    const to = nowUs();
    await child.stop();
    // Beside the profiles: what they are divided by, so they can be charged again later.
    writeFileSync(join(dir, 'window.json'), JSON.stringify({ path, from, to, requests: m.requests }));
    // CPU.<date>.<time>.<pid>.<thread>.<n>.cpuprofile: thread 0 is the event loop that serves.
    const files = readdirSync(dir).filter((name) => name.endsWith('.cpuprofile'));
    const costOf = (name: string) => stageCost(readFileSync(join(dir, name), 'utf8'), [from, to], m.requests);
    const cost = costOf(files.find((name) => name.split('.')[4] === '0')!);
    const otherThreads = files
      .filter((name) => name.split('.')[4] !== '0')
      .reduce((sum, name) => sum + costOf(name).total, 0);
    if (!cost.windowed) console.error(`  ! ${path}: samples not placed in the window; whole profile counted`);
    return { rps: m.rps, cost, otherThreads };
  } finally {
    await child.stop();
  }
}

/**
 * Each route on its own server, so each profile holds that route's requests only; then the bare
 * node:http ceiling (bench/ceiling.mjs) answering the same bytes, profiled the same way: the
 * floor of HTTP parse, headers and write on this machine.
 */
async function profileRoutes(place: DatasetPlace, env: Record<string, string>, token: string) {
  const wrk = createWrk(RESULTS, CONNECTIONS);
  const costs: RouteCost[] = [];
  const recorded: Record<string, { status: number; contentType: string; body: string }> = {};
  let encounterId = '';
  const routes: [string, (id: string) => string, string][] = [
    ['401, malformed key', () => '/external/v1/encounters?limit=50', MALFORMED_TOKEN],
    ['encounter detail', (id) => `/external/v1/encounters/${id}`, token],
    ['list, offset 0', () => '/external/v1/encounters?limit=50', token],
  ];
  const startEds = async (flags: string[]) => {
    const server = await startEdsServer(env, flags);
    const base = `http://127.0.0.1:${server.port}`;
    encounterId ||= await firstEncounter(base, token);
    return { ...server, base };
  };
  for (const [route, path, auth] of routes) {
    let recordFrom = '';
    const profiled = await profileUnderLoad(
      wrk,
      async (flags) => {
        const server = await startEds(flags);
        recordFrom = `${server.base}${path(encounterId)}`;
        const r = await fetch(recordFrom, { headers: { authorization: `Bearer ${auth}` } });
        const body = await r.text();
        recorded[`/${encodeURIComponent(route)}`] = {
          status: r.status,
          contentType: r.headers.get('content-type') ?? '',
          body,
        };
        return server;
      },
      path(encounterId),
      auth,
    );
    costs.push({ route, ...profiled });
    console.error(`${place.store}, ${route}: ${profiled.rps.toFixed(0)} req/s profiled`);
  }
  const recordedFile = join(RESULTS, 'request-cost-responses.json');
  writeFileSync(recordedFile, JSON.stringify(recorded));
  const ceilings: RouteCost[] = [];
  for (const [route] of routes) {
    const profiled = await profileUnderLoad(
      wrk,
      async (flags) => {
        const ceiling = await startCeiling(recordedFile, flags);
        return { ...ceiling, base: `http://127.0.0.1:${ceiling.port}` };
      },
      `/${encodeURIComponent(route)}`,
      undefined,
    );
    ceilings.push({ route: `${route}, bare node:http`, ...profiled });
  }
  return { costs: interleave(costs, ceilings), encounterId };
}

/** [a1, b1, a2, b2, …]: each route's column beside its ceiling's. */
function interleave<T>(a: T[], b: T[]): T[] {
  return a.flatMap((item, i) => [item, b[i]!]);
}

function stageTable(store: string, costs: RouteCost[]): string {
  const head = `| stage (${store}) | ${costs.map((c) => c.route).join(' | ')} |`;
  const rule = `|---|${costs.map(() => '---:').join('|')}|`;
  const rows = STAGES.filter((stage) => costs.some((c) => c.cost.perRequest[stage] >= 0.05)).map(
    (stage) => `| ${stage} | ${costs.map((c) => c.cost.perRequest[stage].toFixed(1)).join(' | ')} |`,
  );
  const total = `| **busy µs per request** | ${costs.map((c) => `**${c.cost.total.toFixed(1)}**`).join(' | ')} |`;
  const idle = `| event loop idle: answers waiting (audit commit, store) | ${costs.map((c) => c.cost.idle.toFixed(1)).join(' | ')} |`;
  const threads = `| other threads (audit writer, V8) | ${costs.map((c) => c.otherThreads.toFixed(1)).join(' | ')} |`;
  const rate = `| req/s while profiled | ${costs.map((c) => c.rps.toFixed(0)).join(' | ')} |`;
  return [head, rule, ...rows, total, idle, threads, rate].join('\n');
}

function timingTable(store: string, timings: StageTiming[]): string {
  return [
    `| stage (${store}, in isolation) | what | µs |`,
    '|---|---|---:|',
    ...timings.map((t) => `| ${t.stage} | ${t.what} | ${t.us.toFixed(2)} |`),
  ].join('\n');
}

async function main() {
  buildServer(ROOT);
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], {
    cwd: ROOT,
    encoding: 'utf8',
  }).stdout.trim();
  const report: Record<string, unknown> = {
    when: new Date().toISOString(),
    commit,
    encounters: N,
    connections: CONNECTIONS,
    duration_s: DURATION,
    machine: {
      cpus: cpus().length,
      model: cpus()[0]?.model,
      memory_gb: Math.round(totalmem() / 2 ** 30),
      node: process.version,
    },
  };
  const out: string[] = [];
  for (const store of values.stores.split(',')) {
    const place: DatasetPlace = { store, encounters: N, results: RESULTS };
    const env = datasetEnv(place, '');
    const dataset = await buildDataset(place, '', env, ROOT);
    const token = mintKey(dataset.organizationId, env, ROOT);
    let encounterId = '';
    if (!values['skip-profile']) {
      const profiled = await profileRoutes(place, env, token);
      encounterId = profiled.encounterId;
      report[`${store}_profile`] = profiled.costs;
      out.push(stageTable(store, profiled.costs));
    }
    if (!values['skip-stages']) {
      if (!encounterId) {
        const server = await startEdsServer(env);
        encounterId = await firstEncounter(`http://127.0.0.1:${server.port}`, token);
        await server.stop();
      }
      const timings = await timeStages({ env, token, encounterId, connections: CONNECTIONS });
      report[`${store}_stages`] = timings;
      out.push(timingTable(store, timings));
    }
  }
  const file = join(RESULTS, `request-cost-${Date.now()}.json`);
  writeFileSync(file, JSON.stringify(report, null, 2));
  const machine = report.machine as { cpus: number; model: string; node: string };
  console.log(
    `\n${report.when}, commit ${commit}, ${machine.cpus} × ${machine.model}, Node ${machine.node}; ${N.toLocaleString('en-US')} encounters, wrk 1 thread, ${CONNECTIONS} connections, ${DURATION} s per route\n`,
  );
  console.log(out.join('\n\n'));
  console.log(`\nwritten: ${file}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

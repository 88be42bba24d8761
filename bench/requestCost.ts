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
import { buildDataset, type DatasetPlace, datasetEnv, mintKey } from './datasets.js';
import { ROOT, startEdsServer } from './processes.js';
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

const MALFORMED_TOKEN = `eds_live_${'0'.repeat(37)}A`;

interface RouteCost {
  route: string;
  rps: number;
  cost: StageCost;
  /** µs per request of the service's other threads (the SQLite audit writer, the checkpointer). */
  otherThreads: number;
}

const nowUs = () => Number(process.hrtime.bigint() / 1000n);

async function firstEncounter(base: string, token: string): Promise<string> {
  const page: any = await (
    await fetch(`${base}/external/v1/encounters?limit=1`, { headers: { authorization: `Bearer ${token}` } })
  ).json();
  return page.items[0].encounter_id;
}

/** One server per route, so each profile holds that route's requests only. */
async function profileRoutes(place: DatasetPlace, env: Record<string, string>, token: string) {
  const wrk = createWrk(RESULTS, CONNECTIONS);
  const costs: RouteCost[] = [];
  let encounterId = '';
  const routes: [string, (id: string) => string, string][] = [
    ['401, malformed key', () => '/external/v1/encounters?limit=50', MALFORMED_TOKEN],
    ['encounter detail', (id) => `/external/v1/encounters/${id}`, token],
    ['list, offset 0', () => '/external/v1/encounters?limit=50', token],
  ];
  for (const [route, path, auth] of routes) {
    const dir = join(RESULTS, `request-cost-${place.store}-${Date.now()}`);
    const server = await startEdsServer(env, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
    try {
      const base = `http://127.0.0.1:${server.port}`;
      encounterId ||= await firstEncounter(base, token);
      const url = `${base}${path(encounterId)}`;
      await wrk.run(url, auth, 2);
      const start = nowUs();
      const m = await wrk.run(url, auth, DURATION);
      const end = nowUs();
      await server.stop();
      // CPU.<date>.<time>.<pid>.<thread>.<n>.cpuprofile: thread 0 is the event loop that serves.
      const files = readdirSync(dir).filter((name) => name.endsWith('.cpuprofile'));
      const costOf = (name: string) =>
        stageCost(readFileSync(join(dir, name), 'utf8'), [start, end], m.requests);
      const cost = costOf(files.find((name) => name.split('.')[4] === '0')!);
      const otherThreads = files
        .filter((name) => name.split('.')[4] !== '0')
        .reduce((sum, name) => sum + costOf(name).total, 0);
      if (!cost.windowed)
        console.error(`  ! ${route}: samples not placed in the window; whole profile counted`);
      costs.push({ route, rps: m.rps, cost, otherThreads });
      console.error(
        `${place.store}, ${route}: ${m.rps.toFixed(0)} req/s profiled, ${cost.total.toFixed(1)} µs busy`,
      );
    } finally {
      await server.stop();
    }
  }
  return { costs, encounterId };
}

function stageTable(store: string, costs: RouteCost[]): string {
  const head = `| stage (${store}) | ${costs.map((c) => c.route).join(' | ')} |`;
  const rule = `|---|${costs.map(() => '---:').join('|')}|`;
  const rows = STAGES.filter((stage) => costs.some((c) => c.cost.perRequest[stage] >= 0.05)).map(
    (stage) => `| ${stage} | ${costs.map((c) => c.cost.perRequest[stage].toFixed(1)).join(' | ')} |`,
  );
  const total = `| **busy µs per request** | ${costs.map((c) => `**${c.cost.total.toFixed(1)}**`).join(' | ')} |`;
  const idle = `| event loop idle: answers waiting (audit commit, store) | ${costs.map((c) => c.cost.idle.toFixed(1)).join(' | ')} |`;
  const threads = `| other threads (audit writer, checkpointer) | ${costs.map((c) => c.otherThreads.toFixed(1)).join(' | ')} |`;
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
  const build = spawnSync('npm', ['run', 'build', '-w', 'packages/server'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('build failed');
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

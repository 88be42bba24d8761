/**
 * `npm run bench:instructions`: the instructions one answer costs, counted by valgrind's
 * callgrind, for this code, for builds of it (`--build NAME=DIR|COMMIT`) on the same data set,
 * and for the bare `node:http` ceiling and the framework floor answering the same recorded bytes.
 *
 * Seconds on this VM move by a quarter between runs, which hides any change smaller than that;
 * instruction counts do not move with the machine's load. Each server runs as it does under
 * `npm run bench` (`eds serve` in production mode), under callgrind with its instrumentation off.
 * It is warmed up (--warmup answers, so that V8 has compiled the hot path), then counting is
 * switched on for --requests answers sent over 32 keep-alive connections, and the counts are read
 * from callgrind's dump, thread by thread:
 * - the request thread (the main thread: HTTP, routing, hooks, reads, serialization);
 * - all threads (adds the audit writer and its WAL checkpoints, V8's compiler and collector
 *   threads). Work that runs on a timer (checkpoints, flushes) is charged to however many
 *   answers the slowed-down server gave meanwhile, so this column moves more than the first.
 * The kernel's work (socket reads and writes, fsync) is not counted: the figure is the process's
 * own code. Each server is measured --rounds times in turn; the median is reported, and every
 * round's figure beside it shows how repeatable the count is.
 *
 * With --functions N, this code runs with `--perf-basic-prof-only-functions` and its request
 * thread's N costliest functions (self instructions per answer, JavaScript named) are listed for
 * each route, from its last round.
 *
 * Options: --build NAME=DIR|COMMIT (repeatable) --routes "401,detail,list" --requests N (4000)
 * --warmup N (20000) --rounds N (3) --store sqlite|postgres --encounters N (100000) --functions N
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { selfCostByFunction } from './callgrindFunctions.js';
import {
  buildDataset,
  comparedRoutes,
  type DatasetPlace,
  datasetEnv,
  mintKey,
  recordAnswers,
} from './datasets.js';
import { median } from './median.js';
import {
  type Build,
  buildServer,
  type Child,
  parseBuild,
  ROOT,
  startCeiling,
  startEdsServer,
  startFrameworkFloor,
} from './processes.js';

const { values } = parseArgs({
  options: {
    build: { type: 'string', multiple: true, default: [] },
    routes: { type: 'string', default: '401,detail,list' },
    requests: { type: 'string', default: '4000' },
    warmup: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '3' },
    store: { type: 'string', default: 'sqlite' },
    encounters: { type: 'string', default: '100000' },
    functions: { type: 'string', default: '0' },
  },
});
const FUNCTIONS = Number(values.functions);
const REQUESTS = Number(values.requests);
const WARMUP = Number(values.warmup);
const ROUNDS = Math.max(1, Number(values.rounds));
const CONNECTIONS = 32;
const RESULTS = join(ROOT, 'bench', 'results');
mkdirSync(RESULTS, { recursive: true });
const PLACE: DatasetPlace = { store: values.store, encounters: Number(values.encounters), results: RESULTS };

interface CountedServer {
  name: string;
  server: Child & { port: number };
  dumps: string;
  /** Recorded-bytes servers answer each route on its own path instead of the service's. */
  recorded: boolean;
}

interface Count {
  requestThread: number;
  allThreads: number;
}

/**
 * Where one server's dumps go: kept after the run, beside the results, for callgrind_annotate
 * (each run's own, so two runs at once do not mix).
 */
function dumpsFolder(server: number): string {
  return join(RESULTS, `callgrind-${process.pid}-${server}`);
}

/**
 * valgrind's command line for one server (callgrind, instrumentation off, a dump per thread),
 * with its dumps folder made empty.
 */
function underCallgrind(dumps: string): string[] {
  rmSync(dumps, { recursive: true, force: true });
  mkdirSync(dumps);
  return [
    'valgrind',
    '--tool=callgrind',
    '--instr-atstart=no',
    '--separate-threads=yes',
    `--callgrind-out-file=${join(dumps, 'callgrind.out')}`,
    // V8 rewrites code it has generated; valgrind must notice it everywhere, not only on the stack.
    '--smc-check=all',
  ];
}

/** Node's perf map of generated code, and V8's log beside the dumps instead of the working directory. */
function perfMapFlags(dumps: string): string[] {
  return [
    '--perf-basic-prof-only-functions',
    `--logfile=${join(dumps, 'v8.log')}`,
    '--no-logfile-per-isolate',
  ];
}

/** `eds serve` under callgrind. */
async function startCounted(
  build: Build,
  env: Record<string, string>,
  dumps: string,
  flags: string[],
): Promise<CountedServer> {
  // Under callgrind the server runs tens of times slower: the waits that bound an answer in
  // production would refuse answers here.
  const slow = {
    EDS_AUDIT_COMMIT_TIMEOUT_MS: '60000',
    EDS_REQUEST_TIMEOUT_MS: '600000',
    EDS_KEEP_ALIVE_TIMEOUT_MS: '600000',
  };
  const server = await startEdsServer(
    { ...env, ...slow },
    flags,
    build.root,
    process.execPath,
    underCallgrind(dumps),
  );
  return { name: build.name, server, dumps, recorded: false };
}

/** Sends `count` GETs over the pool's connections and checks every status. */
async function send(pool: Pool, path: string, token: string, count: number, status: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      const answer = await pool.request({
        method: 'GET',
        path,
        headers: { authorization: `Bearer ${token}` },
      });
      await answer.body.dump({ limit: Number.POSITIVE_INFINITY });
      if (answer.statusCode !== status)
        throw new Error(`${path} answered ${answer.statusCode}, not ${status}`);
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
}

function callgrindControl(pid: number, args: string[]): void {
  execFileSync('callgrind_control', [...args, String(pid)], { stdio: 'ignore' });
}

/** The newest dump's files, one a thread (callgrind.out.PART-THREAD), the request thread's first. */
function lastDumpFiles(dumps: string): { file: string; thread: number }[] {
  const parts = readdirSync(dumps)
    .map((file) => /^callgrind\.out\.(\d+)-(\d+)$/.exec(file))
    .filter((m) => m !== null);
  const part = Math.max(...parts.map((m) => Number(m[1])));
  if (!Number.isFinite(part)) throw new Error(`no callgrind dump in ${dumps}`);
  return parts
    .filter((m) => Number(m[1]) === part)
    .map((m) => ({ file: join(dumps, m[0]), thread: Number(m[2]) }))
    .sort((a, b) => a.thread - b.thread);
}

/** The instructions of the newest dump, thread by thread. */
function lastDump(dumps: string): Count {
  const count: Count = { requestThread: 0, allThreads: 0 };
  for (const { file, thread } of lastDumpFiles(dumps)) {
    const total = /^(?:summary|totals): (\d+)/m.exec(readFileSync(file, 'utf8'))?.[1];
    if (!total) throw new Error(`no total in ${file}`);
    count.allThreads += Number(total);
    if (thread === 1) count.requestThread += Number(total);
  }
  return count;
}

async function measure(counted: CountedServer, path: string, token: string, status: number): Promise<Count> {
  const pid = counted.server.process.pid!;
  // Idle connections are closed by this side first (the recorded-bytes servers keep Node's 5 s):
  // a request sent as the server closes its connection would fail the run.
  const pool = new Pool(`http://127.0.0.1:${counted.server.port}`, {
    connections: CONNECTIONS,
    keepAliveTimeout: 1000,
    keepAliveMaxTimeout: 1000,
  });
  try {
    await send(pool, path, token, WARMUP, status);
    callgrindControl(pid, ['--zero']);
    callgrindControl(pid, ['--instr=on']);
    await send(pool, path, token, REQUESTS, status);
    callgrindControl(pid, ['--dump']);
    callgrindControl(pid, ['--instr=off']);
  } finally {
    await pool.close();
  }
  const count = lastDump(counted.dumps);
  return { requestThread: count.requestThread / REQUESTS, allThreads: count.allThreads / REQUESTS };
}

/** This code's costliest functions on its request thread in the last round, per answer. */
function printFunctions(route: string, counted: CountedServer): void {
  const [requestThread] = lastDumpFiles(counted.dumps);
  const costs = selfCostByFunction(requestThread!.file, `/tmp/perf-${counted.server.process.pid}.map`);
  const total = [...costs.values()].reduce((a, b) => a + b, 0);
  console.log(
    `\n${route}, this code's request thread: ${Math.round(total / REQUESTS).toLocaleString('en-US')} instructions per answer`,
  );
  console.log('| instructions per answer | share | function |');
  console.log('|---:|---:|---|');
  for (const [name, cost] of [...costs].sort((a, b) => b[1] - a[1]).slice(0, FUNCTIONS)) {
    console.log(
      `| ${Math.round(cost / REQUESTS).toLocaleString('en-US')} | ${((cost / total) * 100).toFixed(1)} % | ${name.slice(0, 160)} |`,
    );
  }
  console.log('');
}

const thousands = (n: number) => Math.round(n / 1000).toLocaleString('en-US');

async function main() {
  buildServer(ROOT);
  const builds: Build[] = [
    { name: 'this code', root: ROOT },
    ...values.build.map((text) => parseBuild(text, RESULTS)),
  ];
  const env = datasetEnv(PLACE, '');
  const dataset = await buildDataset(PLACE, '', env, ROOT);
  const token = mintKey(dataset.organizationId, env, ROOT);
  const servers: CountedServer[] = [];
  try {
    for (const [i, build] of builds.entries()) {
      const dumps = dumpsFolder(i);
      servers.push(
        await startCounted(build, env, dumps, i === 0 && FUNCTIONS > 0 ? perfMapFlags(dumps) : []),
      );
    }
    const base = `http://127.0.0.1:${servers[0]!.server.port}`;
    const routes = await comparedRoutes(base, token);
    const selected = values.routes.split(',');
    for (const route of selected) {
      if (!routes[route])
        throw new Error(`unknown route "${route}": one of ${Object.keys(routes).join(', ')}`);
    }
    const recorded = await recordAnswers(
      base,
      Object.fromEntries(selected.map((route) => [route, routes[route]!])),
      (route) => `/${route}`,
    );
    const recordedFile = join(RESULTS, 'instructions-responses.json');
    writeFileSync(recordedFile, JSON.stringify(recorded));
    for (const [name, start] of [
      ['bare node:http (ceiling)', startCeiling.bind(null, recordedFile, [])],
      ['bare Fastify (floor)', startFrameworkFloor.bind(null, recordedFile)],
    ] as const) {
      const dumps = dumpsFolder(servers.length);
      servers.push({ name, server: await start(underCallgrind(dumps)), dumps, recorded: true });
    }

    console.log(
      `${values.store}, ${PLACE.encounters.toLocaleString('en-US')} encounters, ${CONNECTIONS} connections, ${WARMUP.toLocaleString('en-US')} answers of warm-up, then ${REQUESTS.toLocaleString('en-US')} counted; median of ${ROUNDS} rounds, in thousands of instructions per answer`,
    );
    console.log(
      '| route | server | request thread | against this code | all threads | against this code | request thread per round |',
    );
    console.log('|---|---|---:|---:|---:|---:|---|');
    for (const route of selected) {
      const [path, auth] = routes[route]!;
      const { status } = recorded[`/${route}`]!;
      const counts = servers.map(() => [] as Count[]);
      for (let round = 0; round < ROUNDS; round++) {
        for (const [i, counted] of servers.entries()) {
          counts[i]!.push(await measure(counted, counted.recorded ? `/${route}` : path, auth, status));
        }
      }
      const own = (i: number, key: keyof Count) => median(counts[i]!.map((c) => c[key]));
      const change = (i: number, key: keyof Count) => {
        if (i === 0) return '–';
        const fraction = own(i, key) / own(0, key) - 1;
        return `${fraction >= 0 ? '+' : ''}${(fraction * 100).toFixed(1)} %`;
      };
      for (const [i, counted] of servers.entries()) {
        console.log(
          `| ${route} | ${counted.name} | ${thousands(own(i, 'requestThread'))} | ${change(i, 'requestThread')} | ${thousands(own(i, 'allThreads'))} | ${change(i, 'allThreads')} | ${counts[i]!.map((c) => thousands(c.requestThread)).join(' ')} |`,
        );
      }
      if (FUNCTIONS > 0) printFunctions(route, servers[0]!);
    }
  } finally {
    for (const { server } of servers) await server.stop();
    if (FUNCTIONS > 0 && servers[0])
      rmSync(`/tmp/perf-${servers[0].server.process.pid}.map`, { force: true });
  }
}

await main();

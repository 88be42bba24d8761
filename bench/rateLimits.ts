/**
 * The rate limiter's part of `npm run bench` (decisions.md, Rate limits):
 *
 * 1. Cost: the encounter detail route on three servers over the same data (off, in-process
 *    buckets, Redis buckets), all started and warmed up first, then measured in many short rounds
 *    driven by the benchmark's wrk, each round measuring the three back to back in a rotating
 *    order. Single runs on this VM drift by ±25 % over tens of seconds; short rounds put each
 *    server's run seconds from the "off" run it is compared with, and rotation keeps any server
 *    from always following the same one. Reported: the median of the rounds' ratios to their own
 *    "off", and their mean with a 95 % interval, so a reader sees how sure the figure is.
 *    Beside it, CPU per answer (the server's threads, and redis-server's for the Redis server),
 *    sampled from /proc around each run: in a closed loop the throughput cost is mostly the
 *    limiter's added latency, and this VM's scheduling noise moves it by tens of percent a round;
 *    CPU per answer is what a CPU-bound deployment pays, and moves far less.
 *    "On" uses a rate no request reaches: every request pays for its bucket and none is refused.
 *    Targets: ≤ 5 % of throughput without Redis, ≤ 15 % with it.
 * 2. Isolation: one key floods with every connection while another key makes a steady 50
 *    requests a second (under its 100); the quiet key's p99 must stay within 2× of its p99 with
 *    nobody flooding. Run with the deployment's default limits, without and with Redis. The
 *    flood is wrk in its own process: in this process it would stall the quiet key's client
 *    (one event loop) and measure the client, not the service. The quiet key is a fixed-rate
 *    client here (wrk has no fixed-rate mode) on 2 connections, timing each answer to the
 *    microsecond: autocannon's whole milliseconds made a p99 of 3-7 ms too coarse to compare.
 *    Answers are timed from the moment each request is handed to the pool (the client's own timer
 *    lateness left out). Alone and flooded alternate; each side's p99 is taken over all its
 *    turns' answers together (1,200 in runs of 8 s), not averaged from per-turn p99s that rest on
 *    a handful of answers each.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { Pool } from 'undici';
import { type Child, eds, startEdsServer } from './processes.js';
import { cpuSeconds, type createWrk } from './wrk.js';

export interface LimiterBenchOptions {
  env: Record<string, string>;
  organizationId: string;
  encounterId: string;
  redisUrl: string;
  /** The benchmark's load generator (its connection count is the flood's and the cost runs'). */
  wrk: ReturnType<typeof createWrk>;
  duration: number;
  /** Rounds of the cost measurement. */
  costRounds: number;
  /**
   * Other code (bench/run.ts --before) to measure beside this code with Redis, on the same data:
   * a fourth server in every cost round, so a change to the Redis path is compared within one
   * run. That code must read this code's schema.
   */
  beforeRoot?: string;
}

interface Server {
  name: string;
  base: string;
  child: Child;
  /** Its buckets are in Redis (whose CPU then counts too). */
  usesRedis: boolean;
}

/** Each server's run per round of the cost measurement, and its warm-up before them. */
const COST_RUN_S = 3;
const WARM_UP_S = 3;
/** Alone/flooded pairs of the isolation measurement. */
const ISOLATION_TURNS = 3;

const NEVER_REACHED = { EDS_RATE_LIMIT_PER_KEY: '1000000', EDS_RATE_LIMIT_BURST: '10000000' };

async function start(name: string, env: Record<string, string>, root?: string): Promise<Server> {
  const child = await startEdsServer(env, [], root);
  return { name, base: `http://127.0.0.1:${child.port}`, child, usesRedis: env.EDS_REDIS_URL !== undefined };
}

function newKey(options: LimiterBenchOptions): string {
  return eds(
    [
      'key',
      'create',
      '--org',
      options.organizationId,
      '--scopes',
      'encounters:read,patients:read,documents:read',
    ],
    options.env,
  ).token;
}

/**
 * The quiet key: `rate` requests a second, each sent on time on one of 2 connections, timed from
 * the moment it is handed to the pool until its body has been read (milliseconds, fractional).
 */
async function quietly(url: string, token: string, seconds: number, rate: number) {
  const { origin, pathname } = new URL(url);
  const pool = new Pool(origin, { connections: 2 });
  const latencies: number[] = [];
  let non2xx = 0;
  const start = performance.now();
  const answers: Promise<void>[] = [];
  for (let i = 0; i < seconds * rate; i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const sent = performance.now();
    answers.push(
      pool
        .request({ path: pathname, method: 'GET', headers: { authorization: `Bearer ${token}` } })
        .then(async (response) => {
          await response.body.dump();
          latencies.push(performance.now() - sent);
          if (response.statusCode !== 200) non2xx++;
        })
        .catch(() => {
          // A failed request counts as a non-200 answer (autocannon counted errors too); one
          // reset connection must not end the benchmark.
          non2xx++;
        }),
    );
  }
  await Promise.all(answers);
  await pool.close();
  return { latencies, non2xx };
}

interface CostRow {
  name: string;
  rps: number;
  runs: number[];
  /** Each round's cost against that round's "off". */
  roundCosts: number[];
  /** The median of roundCosts. */
  cost: number;
  /** The mean of roundCosts and the half-width of its 95 % interval. */
  meanCost: number;
  meanCost95: number;
  /** CPU per answer (µs; the server's threads, and Redis's for the Redis server), median. */
  cpuUsPerAnswer: number;
  /** The median of the rounds' CPU per answer against that round's "off". */
  cpuCost: number;
}

interface IsolationRow {
  name: string;
  /** p99 over every answer of the quiet key's turns alone, and of its turns during the flood. */
  quiet_alone_p99_ms: number;
  quiet_during_flood_p99_ms: number;
  /** Each turn's own p99, to show the spread. */
  quiet_alone_turn_p99_ms: number[];
  quiet_during_flood_turn_p99_ms: number[];
  ratio: number;
  quiet_non2xx: number;
  flood_rps: number;
  flood_refused_share: number;
}

export interface LimiterBenchResult {
  cost: CostRow[];
  isolation: IsolationRow[];
}

export async function benchRateLimits(options: LimiterBenchOptions): Promise<LimiterBenchResult> {
  const { env, wrk, duration } = options;
  const path = `/external/v1/encounters/${options.encounterId}`;
  const off = { ...env, EDS_RATE_LIMIT_PER_KEY: '0', EDS_RATE_LIMIT_UNAUTHENTICATED: '0' };
  const redis = { ...env, ...NEVER_REACHED, EDS_REDIS_URL: options.redisUrl };
  type Config = [name: string, env: Record<string, string>, root?: string];
  const configs: Config[] = [
    ['limits off', off],
    ['limits on, in-process', { ...env, ...NEVER_REACHED }],
    ['limits on, Redis', redis],
  ];
  if (options.beforeRoot) configs.push(['limits on, Redis, before', redis, options.beforeRoot]);
  const token = newKey(options);
  const servers: Server[] = [];
  const cost: Record<string, number[]> = {};
  const cpu: Record<string, number[]> = {};
  const redisPid = await redisProcessId(options.redisUrl);
  try {
    for (const [name, serverEnv, root] of configs) servers.push(await start(name, serverEnv, root));
    for (const server of servers) await wrk.measure(`${server.base}${path}`, token, WARM_UP_S);
    for (let round = 0; round < options.costRounds; round++) {
      for (const server of rotation(servers, round)) {
        const url = `${server.base}${path}`;
        await wrk.run(url, token, 1);
        // The server's CPU (every thread) and, for the Redis server, Redis's: per answer, the
        // work the limiter adds whatever the latency, as a CPU-bound deployment would pay it.
        const pids = server.usesRedis ? [server.child.process.pid!, redisPid] : [server.child.process.pid!];
        const cpuBefore = sum(pids.map(cpuOf));
        const m = await wrk.run(url, token, COST_RUN_S);
        const cpuUsed = sum(pids.map(cpuOf)) - cpuBefore;
        if (m.non2xx > 0) throw new Error(`${server.name}: ${m.non2xx} answers were not 200`);
        cost[server.name] = [...(cost[server.name] ?? []), m.rps];
        cpu[server.name] = [...(cpu[server.name] ?? []), (cpuUsed * 1e6) / m.requests];
      }
      console.error(
        `limiter cost, round ${round + 1}: ${servers.map((s) => `${s.name} ${cost[s.name]!.at(-1)!.toFixed(0)}`).join(', ')} req/s`,
      );
    }
  } finally {
    for (const server of servers) await server.child.stop();
  }
  const offRuns = cost['limits off']!;
  const offCpu = cpu['limits off']!;
  const costRows: CostRow[] = Object.entries(cost).map(([name, runs]) => {
    const roundCosts = runs.map((rps, round) => 1 - rps / offRuns[round]!);
    const { mean, halfWidth95 } = meanWithInterval(roundCosts);
    const cpuPerAnswer = cpu[name]!;
    return {
      name,
      rps: median(runs),
      runs,
      roundCosts,
      cost: median(roundCosts),
      meanCost: mean,
      meanCost95: halfWidth95,
      cpuUsPerAnswer: median(cpuPerAnswer),
      cpuCost: median(cpuPerAnswer.map((us, round) => us / offCpu[round]! - 1)),
    };
  });

  // Isolation, at the deployment's defaults (100 a second per key, burst 200).
  const isolation: IsolationRow[] = [];
  for (const [name, extra] of [
    ['without Redis', {}],
    ['with Redis', { EDS_REDIS_URL: options.redisUrl }],
  ] as const) {
    const server = await start(name, { ...env, EDS_RATE_LIMIT_UNAUTHENTICATED: '0', ...extra });
    try {
      const quiet = newKey(options);
      const flooding = newKey(options);
      const url = `${server.base}${path}`;
      // Warm up both paths (answers and held refusals) with a third key, then the quiet one's:
      // a first run on a cold process measured JIT compilation (p99 13-15 ms against 4-6 later).
      await wrk.measure(url, newKey(options), WARM_UP_S);
      await quietly(url, quiet, WARM_UP_S, 50);
      const alone: number[][] = [];
      const flooded: number[][] = [];
      let quietNon2xx = 0;
      let floodRun = { rps: 0, refused: 0 };
      for (let turn = 0; turn < ISOLATION_TURNS; turn++) {
        alone.push((await quietly(url, quiet, duration, 50)).latencies);
        // wrk warms up for a second first, so the flood covers the quiet key's whole run.
        const [f, loaded] = await Promise.all([
          wrk.measure(url, flooding, duration + 1),
          quietly(url, quiet, duration, 50),
        ]);
        flooded.push(loaded.latencies);
        quietNon2xx += loaded.non2xx;
        floodRun = { rps: f.rps, refused: f.non2xx / f.requests };
      }
      const p99 = (turns: number[][]) => round1(percentile(turns.flat(), 0.99));
      const row: IsolationRow = {
        name,
        quiet_alone_p99_ms: p99(alone),
        quiet_during_flood_p99_ms: p99(flooded),
        quiet_alone_turn_p99_ms: alone.map((turn) => p99([turn])),
        quiet_during_flood_turn_p99_ms: flooded.map((turn) => p99([turn])),
        ratio: percentile(flooded.flat(), 0.99) / percentile(alone.flat(), 0.99),
        quiet_non2xx: quietNon2xx,
        flood_rps: floodRun.rps,
        flood_refused_share: floodRun.refused,
      };
      isolation.push(row);
      console.error(
        `isolation ${name}: quiet p99 ${row.quiet_alone_p99_ms} ms alone (turns ${row.quiet_alone_turn_p99_ms.join(', ')}), ${row.quiet_during_flood_p99_ms} ms (turns ${row.quiet_during_flood_turn_p99_ms.join(', ')}) during a flood of ${floodRun.rps.toFixed(0)} req/s (${(floodRun.refused * 100).toFixed(0)} % refused)`,
      );
    } finally {
      await server.child.stop();
    }
  }
  return { cost: costRows, isolation };
}

/**
 * The redis-server's process id, for its CPU: the benchmark's Redis must run on this machine
 * (INFO's process_id is its own namespace's; a containerised Redis would name another process).
 */
async function redisProcessId(url: string): Promise<number> {
  const client = new Redis(url);
  try {
    const pid = Number(/^process_id:(\d+)/m.exec(await client.info('server'))?.[1]);
    const name = Number.isInteger(pid) ? processName(pid) : undefined;
    if (name !== 'redis-server') {
      throw new Error(`the benchmark's Redis (${url}) is not a redis-server process of this machine`);
    }
    return pid;
  } finally {
    client.disconnect();
  }
}

function processName(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** CPU seconds a process has used; a process that is gone is an error, not zero. */
function cpuOf(pid: number): number {
  const seconds = cpuSeconds(pid);
  if (seconds === undefined) throw new Error(`process ${pid} is gone: no CPU figure`);
  return seconds;
}

/** Round r's order: started at a different server each round, reversed every other round. */
function rotation<T>(items: readonly T[], round: number): T[] {
  const shift = round % items.length;
  const order = [...items.slice(shift), ...items.slice(0, shift)];
  return Math.floor(round / items.length) % 2 === 0 ? order : order.reverse();
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
const mean = (xs: readonly number[]) => sum(xs) / xs.length;
const round1 = (x: number) => Math.round(x * 10) / 10;
/** The value below which `share` of the samples fall (nearest rank). */
const percentile = (xs: readonly number[], share: number) =>
  [...xs].sort((a, b) => a - b)[Math.max(0, Math.ceil(share * xs.length) - 1)] ?? Number.NaN;
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The mean and the half-width of its 95 % interval (normal approximation). */
function meanWithInterval(xs: readonly number[]): { mean: number; halfWidth95: number } {
  const m = mean(xs);
  const variance = xs.reduce((a, x) => a + (x - m) ** 2, 0) / Math.max(1, xs.length - 1);
  return { mean: m, halfWidth95: 1.96 * Math.sqrt(variance / xs.length) };
}

export function printRateLimits(result: LimiterBenchResult): void {
  console.log('\nRate limiter cost, encounter detail (targets: ≤ 5 % in-process, ≤ 15 % Redis)');
  console.log(
    `| server | req/s (median) | req/s by round | cost by round | cost (median of ${result.cost[0]?.runs.length ?? 0} rounds) | mean cost, 95 % interval | CPU µs per answer | CPU cost |`,
  );
  console.log('|---|---|---|---|---|---|---|---|');
  const percent = (x: number) => `${(x * 100).toFixed(1)} %`;
  for (const r of result.cost) {
    console.log(
      `| ${r.name} | ${r.rps.toFixed(0)} | ${r.runs.map((x) => x.toFixed(0)).join(', ')} | ${r.roundCosts.map(percent).join(', ')} | ${percent(r.cost)} | ${percent(r.meanCost)} ± ${percent(r.meanCost95)} | ${r.cpuUsPerAnswer.toFixed(1)} | ${percent(r.cpuCost)} |`,
    );
  }
  console.log('\nOne key flooding, another at 50 req/s (target: quiet p99 within 2× of alone)');
  console.log(
    '| store | quiet p99 alone ms (by turn) | quiet p99 during flood ms (by turn) | ratio | quiet non-200 | flood req/s | flood refused |',
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const r of result.isolation) {
    console.log(
      `| ${r.name} | ${r.quiet_alone_p99_ms} (${r.quiet_alone_turn_p99_ms.join(', ')}) | ${r.quiet_during_flood_p99_ms} (${r.quiet_during_flood_turn_p99_ms.join(', ')}) | ${r.ratio.toFixed(2)}× | ${r.quiet_non2xx} | ${r.flood_rps.toFixed(0)} | ${(r.flood_refused_share * 100).toFixed(0)} % |`,
    );
  }
}

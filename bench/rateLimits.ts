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
 *    "On" uses a rate no request reaches: every request pays for its bucket and none is refused.
 *    Targets: ≤ 5 % of throughput without Redis, ≤ 15 % with it.
 * 2. Isolation: one key floods with every connection while another key makes a steady 50
 *    requests a second (under its 100); the quiet key's p99 must stay within 2× of its p99 with
 *    nobody flooding. Run with the deployment's default limits, without and with Redis. The
 *    flood is wrk in its own process: in this process it would stall the quiet key's client
 *    (one event loop) and measure the client, not the service. The quiet key is autocannon at a
 *    fixed rate (wrk has no fixed-rate mode), 2 connections. Alone and flooded alternate.
 */
import autocannon from 'autocannon';
import { type Child, eds, startEdsServer } from './processes.js';
import type { createWrk } from './wrk.js';

export interface LimiterBenchOptions {
  env: Record<string, string>;
  organizationId: string;
  encounterId: string;
  redisUrl: string;
  /** The benchmark's load generator (its connection count is the flood's and the cost runs'). */
  wrk: ReturnType<typeof createWrk>;
  duration: number;
}

interface Server {
  name: string;
  base: string;
  child: Child;
}

/** Rounds of the cost measurement, each server's run per round, and its warm-up before them. */
const COST_ROUNDS = 12;
const COST_RUN_S = 3;
const WARM_UP_S = 3;
/** Alone/flooded pairs of the isolation measurement. */
const ISOLATION_TURNS = 3;

const NEVER_REACHED = { EDS_RATE_LIMIT_PER_KEY: '1000000', EDS_RATE_LIMIT_BURST: '10000000' };

async function start(name: string, env: Record<string, string>): Promise<Server> {
  const child = await startEdsServer(env);
  return { name, base: `http://127.0.0.1:${child.port}`, child };
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

/** The quiet key: a fixed rate of requests a second from 2 connections. */
async function quietly(url: string, token: string, duration: number, rate: number) {
  const r = await autocannon({
    url,
    connections: 2,
    duration,
    headers: { authorization: `Bearer ${token}` },
    overallRate: rate,
  });
  return { p99: r.latency.p99, non2xx: r.non2xx };
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
}

interface IsolationRow {
  name: string;
  quiet_alone_p99_ms: number[];
  quiet_during_flood_p99_ms: number[];
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
  const configs: [string, Record<string, string>][] = [
    ['limits off', off],
    ['limits on, in-process', { ...env, ...NEVER_REACHED }],
    ['limits on, Redis', { ...env, ...NEVER_REACHED, EDS_REDIS_URL: options.redisUrl }],
  ];
  const token = newKey(options);
  const servers: Server[] = [];
  const cost: Record<string, number[]> = {};
  try {
    for (const [name, serverEnv] of configs) servers.push(await start(name, serverEnv));
    for (const server of servers) await wrk.measure(`${server.base}${path}`, token, WARM_UP_S);
    for (let round = 0; round < COST_ROUNDS; round++) {
      for (const server of rotation(servers, round)) {
        const m = await wrk.measure(`${server.base}${path}`, token, COST_RUN_S);
        if (m.non2xx > 0) throw new Error(`${server.name}: ${m.non2xx} answers were not 200`);
        cost[server.name] = [...(cost[server.name] ?? []), m.rps];
      }
      console.error(
        `limiter cost, round ${round + 1}: ${servers.map((s) => `${s.name} ${cost[s.name]!.at(-1)!.toFixed(0)}`).join(', ')} req/s`,
      );
    }
  } finally {
    for (const server of servers) await server.child.stop();
  }
  const offRuns = cost['limits off']!;
  const costRows: CostRow[] = Object.entries(cost).map(([name, runs]) => {
    const roundCosts = runs.map((rps, round) => 1 - rps / offRuns[round]!);
    const { mean, halfWidth95 } = meanWithInterval(roundCosts);
    return {
      name,
      rps: median(runs),
      runs,
      roundCosts,
      cost: median(roundCosts),
      meanCost: mean,
      meanCost95: halfWidth95,
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
      const alone: number[] = [];
      const flooded: number[] = [];
      let quietNon2xx = 0;
      let floodRun = { rps: 0, refused: 0 };
      for (let turn = 0; turn < ISOLATION_TURNS; turn++) {
        alone.push((await quietly(url, quiet, duration, 50)).p99);
        // wrk warms up for a second first, so the flood covers the quiet key's whole run.
        const [f, loaded] = await Promise.all([
          wrk.measure(url, flooding, duration + 1),
          quietly(url, quiet, duration, 50),
        ]);
        flooded.push(loaded.p99);
        quietNon2xx += loaded.non2xx;
        floodRun = { rps: f.rps, refused: f.non2xx / f.requests };
      }
      const row: IsolationRow = {
        name,
        quiet_alone_p99_ms: alone,
        quiet_during_flood_p99_ms: flooded,
        ratio: mean(flooded) / Math.max(mean(alone), 1),
        quiet_non2xx: quietNon2xx,
        flood_rps: floodRun.rps,
        flood_refused_share: floodRun.refused,
      };
      isolation.push(row);
      console.error(
        `isolation ${name}: quiet p99 ${alone.join(', ')} ms alone, ${flooded.join(', ')} ms during a flood of ${floodRun.rps.toFixed(0)} req/s (${(floodRun.refused * 100).toFixed(0)} % refused)`,
      );
    } finally {
      await server.child.stop();
    }
  }
  return { cost: costRows, isolation };
}

/** Round r's order: started at a different server each round, reversed every other round. */
function rotation<T>(items: readonly T[], round: number): T[] {
  const shift = round % items.length;
  const order = [...items.slice(shift), ...items.slice(0, shift)];
  return Math.floor(round / items.length) % 2 === 0 ? order : order.reverse();
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
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
    `| server | req/s (median) | req/s by round | cost by round | cost (median of ${COST_ROUNDS} rounds) | mean cost, 95 % interval |`,
  );
  console.log('|---|---|---|---|---|---|');
  const percent = (x: number) => `${(x * 100).toFixed(1)} %`;
  for (const r of result.cost) {
    console.log(
      `| ${r.name} | ${r.rps.toFixed(0)} | ${r.runs.map((x) => x.toFixed(0)).join(', ')} | ${r.roundCosts.map(percent).join(', ')} | ${percent(r.cost)} | ${percent(r.meanCost)} ± ${percent(r.meanCost95)} |`,
    );
  }
  console.log('\nOne key flooding, another at 50 req/s (target: quiet p99 within 2× of alone)');
  console.log(
    '| store | quiet p99 alone ms | quiet p99 during flood ms | ratio | quiet non-200 | flood req/s | flood refused |',
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const r of result.isolation) {
    console.log(
      `| ${r.name} | ${r.quiet_alone_p99_ms.join(', ')} | ${r.quiet_during_flood_p99_ms.join(', ')} | ${r.ratio.toFixed(2)}× | ${r.quiet_non2xx} | ${r.flood_rps.toFixed(0)} | ${(r.flood_refused_share * 100).toFixed(0)} % |`,
    );
  }
}

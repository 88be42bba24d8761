/**
 * One import's burst of webhook events (PostgreSQL, `npm run bench -- --routes webhooks`): with
 * two `eds worker` processes listening, `events` events are committed in one transaction, as an
 * import writes them, and the time from that commit to each event's first attempt reaching a
 * receiver on loopback is measured, with deliveries per second from the commit to the last one.
 * Directly, and through a forward proxy process (the `proxy` package, HTTP CONNECT).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { now, openScratch, percentile, startReceiver, supportsProxy } from './scratch.js';

export type BurstRoute = 'direct' | 'proxy';

export interface BurstOptions {
  root: string;
  node: string;
  adminUrl: string;
  route: BurstRoute;
  events: number;
  workers: number;
  /** Names the scratch database. */
  name: string;
}

export interface BurstResult {
  route: BurstRoute;
  events: number;
  commit_to_first_attempt_ms: { p50: number; p99: number; max: number };
  deliveries_per_second: number;
  invalid_signatures: number;
  /** From spawning the workers to both listening for work (before the commit; not in the lags). */
  workers_listening_after_ms: number;
}

const PROXY = join(
  import.meta.dirname,
  '..',
  '..',
  'packages',
  'server',
  'test',
  'webhooks',
  'fixtures',
  'forwardProxy.ts',
);

/** The forward proxy as its own process; resolves with its port once it listens. */
async function startProxy(): Promise<{ port: number; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', PROXY], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the forward proxy exited with ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = /^listening (\d+)$/.exec(line);
      if (m) resolve(Number(m[1]));
    });
  });
  return { port, child };
}

export async function measureImportBurst(options: BurstOptions): Promise<BurstResult> {
  const proxy = options.route === 'proxy' ? await startProxy() : undefined;
  let secret = '';
  const receiver = await startReceiver(() => secret);
  try {
    const scratch = await openScratch({
      root: options.root,
      node: options.node,
      adminUrl: options.adminUrl,
      name: options.name,
      receiver,
      settings: proxy ? { EDS_WEBHOOK_PROXY_URL: `http://127.0.0.1:${proxy.port}` } : {},
    });
    secret = scratch.signingSecret;
    try {
      const startUp = await scratch.startWorkers(options.workers);
      const ids = await scratch.commitEvents(options.events);
      const committedAt = now();
      await receiver.waitFor(options.events);
      const lags = ids.map((id) => receiver.arrivals.get(id)! - committedAt).sort((a, b) => a - b);
      const max = lags.at(-1)!;
      return {
        route: options.route,
        events: options.events,
        commit_to_first_attempt_ms: {
          p50: Math.round(percentile(lags, 50)),
          p99: Math.round(percentile(lags, 99)),
          max: Math.round(max),
        },
        deliveries_per_second: Math.round(options.events / (max / 1000)),
        invalid_signatures: receiver.invalidSignatures(),
        workers_listening_after_ms: Math.round(startUp),
      };
    } finally {
      await scratch.close();
    }
  } finally {
    receiver.close();
    if (proxy && proxy.child.exitCode === null) {
      const exited = new Promise((r) => proxy.child.once('exit', r));
      proxy.child.kill('SIGTERM');
      await exited;
    }
  }
}

export interface BurstSide {
  /** '' for this code, 'before' for the code compared with. */
  label: '' | 'before';
  root: string;
  node: string;
}

export interface BurstBenchResult {
  events: number;
  workers: number;
  /** Per route and side, every round and the round with the median deliveries a second. */
  rows: { route: BurstRoute; side: string; median: BurstResult; rounds: BurstResult[] }[];
}

/**
 * The burst, direct and through the proxy, `rounds` times each; with two sides the rounds
 * alternate which goes first, and each side's median round is reported. Code without the proxy
 * setting is measured directly only.
 */
export async function benchImportBurst(options: {
  sides: readonly BurstSide[];
  adminUrl: string;
  events: number;
  workers: number;
  rounds: number;
}): Promise<BurstBenchResult> {
  const rows: BurstBenchResult['rows'] = [];
  for (const route of ['direct', 'proxy'] as const) {
    const sides = options.sides.filter((side) => route === 'direct' || supportsProxy(side.root));
    const bySide = new Map<BurstSide, BurstResult[]>(sides.map((side) => [side, []]));
    for (let round = 0; round < options.rounds; round++) {
      const order = round % 2 === 1 ? [...sides].reverse() : sides;
      for (const side of order) {
        const result = await measureImportBurst({
          root: side.root,
          node: side.node,
          adminUrl: options.adminUrl,
          route,
          events: options.events,
          workers: options.workers,
          name: `burst_${side.label || 'now'}`,
        });
        bySide.get(side)!.push(result);
        console.error(
          `webhooks, ${route}, ${side.label || 'now'}, round ${round + 1}: ${result.deliveries_per_second} deliveries/s, commit → first attempt p50 ${result.commit_to_first_attempt_ms.p50} / p99 ${result.commit_to_first_attempt_ms.p99} / max ${result.commit_to_first_attempt_ms.max} ms (workers listening after ${result.workers_listening_after_ms} ms)`,
        );
      }
    }
    for (const [side, rounds] of bySide) {
      const sorted = [...rounds].sort((a, b) => a.deliveries_per_second - b.deliveries_per_second);
      rows.push({ route, side: side.label || 'now', median: sorted[Math.floor(sorted.length / 2)]!, rounds });
    }
  }
  return { events: options.events, workers: options.workers, rows };
}

export function printImportBurst(result: BurstBenchResult): void {
  console.log(
    `\nWebhooks, one import's burst: ${result.events} events in one commit, ${result.workers} worker processes, PostgreSQL (median round by deliveries/s):`,
  );
  console.log(
    '| route | code | commit → first attempt p50 ms | p99 ms | max ms | deliveries/s | invalid signatures |',
  );
  console.log('|---|---|---:|---:|---:|---:|---:|');
  for (const r of result.rows) {
    const m = r.median;
    const t = m.commit_to_first_attempt_ms;
    console.log(
      `| ${r.route === 'proxy' ? 'through the proxy' : 'direct'} | ${r.side} | ${t.p50} | ${t.p99} | ${t.max} | ${m.deliveries_per_second} | ${r.rounds.reduce((n, x) => n + x.invalid_signatures, 0)} |`,
    );
  }
}

/**
 * `npm run bench:variants`: what one part of the request path costs, measured by taking it out.
 * This code and one or more builds of it (`--build NAME=DIR|COMMIT`: a checkout with one change,
 * such as a hook or a metric removed, or a commit) serve the same data set side by side in
 * production mode; each route is driven by wrk at 32 connections on each server in turn (1 s of
 * warm-up, then --seconds measured), the order alternating round by round. For each it reports
 * the median over the rounds of the server's CPU time per answer (user and system, all threads,
 * from /proc) and of req/s, and the median over the rounds of each round's change against this
 * code's figure in the same round (not the ratio of the two medians): this VM's speed drifts from
 * minute to minute, moving every server alike. At the end, each server's peak RSS.
 *
 * The builds run on this code's data set, so they must share its schema: a change to the request
 * path, not to the store. `--flags "NAME|NODE FLAGS"` runs this code with Node flags added to the
 * image's (a later flag wins over an earlier one: `--maglev-destroy-on-background` undoes the
 * image's `--no-maglev-destroy-on-background`). `--env "NAME|VAR=VALUE …"` runs this code with
 * environment variables added, separated by spaces, values without spaces: a setting, or one
 * Node.js or libuv reads at start (`UV_USE_IO_URING`, `UV_THREADPOOL_SIZE`). The ports are the
 * harness's own.
 *
 * Options: --build NAME=DIR|COMMIT (repeatable) --flags "NAME|NODE FLAGS" (repeatable)
 * --env "NAME|VAR=VALUE …" (repeatable)
 * --routes "401,unknown,detail,list,window,audio" (default 401,detail,list; `window` is the list
 *   within `npm run bench`'s window; `unknown` is the 401 of a
 * well-formed key that no key has) --rounds N (7)
 * --seconds S (5) --store sqlite|postgres --encounters N (100000)
 * --pin (the servers on CPU 0 and wrk on the others: no migrations between CPUs)
 * --servers N (2): servers started for each setting. One process can run its whole life a fifth or
 *   more above or below another process of the same code and flags, in every round alike (cause not
 *   found: docs/benchmarks.md, Method), so rounds alone do not average that out: every server gets a
 *   row, a setting's change is the median over its servers, and the report ends with the largest gap
 *   between servers of one setting, below which a change is not resolved.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildDataset, comparedRoutes, type DatasetPlace, datasetEnv, mintKey } from './datasets.js';
import { median } from './median.js';
import {
  type Build,
  buildServer,
  type Child,
  parseBuild,
  parseEnvPairs,
  ROOT,
  startEdsServer,
} from './processes.js';
import { cpuSeconds, createWrk } from './wrk.js';

const { values } = parseArgs({
  options: {
    build: { type: 'string', multiple: true, default: [] },
    flags: { type: 'string', multiple: true, default: [] },
    env: { type: 'string', multiple: true, default: [] },
    routes: { type: 'string', default: '401,detail,list' },
    rounds: { type: 'string', default: '7' },
    seconds: { type: 'string', default: '5' },
    store: { type: 'string', default: 'sqlite' },
    encounters: { type: 'string', default: '100000' },
    pin: { type: 'boolean', default: false },
    servers: { type: 'string', default: '2' },
  },
});
const ROUNDS = Math.max(1, Number(values.rounds));
const SERVERS_EACH = Math.max(1, Number(values.servers));
const SECONDS = Number(values.seconds);
const RESULTS = join(ROOT, 'bench', 'results');
mkdirSync(RESULTS, { recursive: true });
const PLACE: DatasetPlace = { store: values.store, encounters: Number(values.encounters), results: RESULTS };

async function main() {
  if (values.pin && cpus().length < 2)
    throw new Error('--pin needs two CPUs: one for the servers, one for wrk');
  buildServer(ROOT);
  const settings: (Build & { flags?: string[]; env?: Record<string, string> })[] = [
    { name: 'this code', root: ROOT },
    ...values.build.map((text) => parseBuild(text, RESULTS)),
    ...values.flags.map((text) => {
      const [name = '', flags = ''] = text.split('|');
      return { name, root: ROOT, flags: flags.split(/\s+/).filter(Boolean) };
    }),
    ...values.env.map((text) => {
      const bar = text.indexOf('|');
      const name = text.slice(0, bar).trim();
      const shape = new Error(`--env "${text}": a name, "|", then VAR=VALUE pairs`);
      if (bar < 1 || name === '') throw shape;
      const env = parseEnvPairs(text.slice(bar + 1), '--env');
      if (Object.keys(env).length === 0) throw shape;
      return { name, root: ROOT, env };
    }),
  ];
  // Each setting's servers side by side, named apart; `serversOf[s]` indexes setting s's in `builds`.
  const builds = settings.flatMap((build) =>
    Array.from({ length: SERVERS_EACH }, (_, n) => ({
      ...build,
      name: SERVERS_EACH === 1 ? build.name : `${build.name}, server ${n + 1}`,
    })),
  );
  const serversOf = settings.map((_, s) =>
    Array.from({ length: SERVERS_EACH }, (_, n) => s * SERVERS_EACH + n),
  );
  const env = datasetEnv(PLACE, '');
  const dataset = await buildDataset(PLACE, '', env, ROOT);
  const token = mintKey(dataset.organizationId, env, ROOT);
  const servers: (Child & { port: number })[] = [];
  try {
    for (const build of builds) {
      const server = await startEdsServer({ ...env, ...build.env }, build.flags ?? [], build.root);
      servers.push(server);
      if (values.pin) pin(server.process.pid!, '0');
    }
    // wrk is started by this process: pinned here, it runs on the CPUs the servers do not.
    if (values.pin) pin(process.pid, `1-${cpus().length - 1}`);
    const base = `http://127.0.0.1:${servers[0]!.port}`;
    const routes = await comparedRoutes(base, token);
    const wrk = createWrk(RESULTS, 32);
    console.log(
      `${values.store}, ${PLACE.encounters.toLocaleString('en-US')} encounters, ${ROUNDS} rounds of ${SECONDS} s, wrk at 32 connections${values.pin ? ', servers pinned to CPU 0' : ''}`,
    );
    console.log('| route | build | CPU µs per answer | change | req/s | change | CPU µs per round |');
    console.log('|---|---|---:|---:|---:|---:|---|');
    /** Per route, the largest gap in CPU per answer between two servers of one setting. */
    const spreads: string[] = [];
    for (const route of values.routes.split(',')) {
      const target = routes[route];
      if (!target) throw new Error(`unknown route "${route}": one of ${Object.keys(routes).join(', ')}`);
      const [path, auth] = target;
      const cost = builds.map(() => [] as number[]);
      const rps = builds.map(() => [] as number[]);
      for (let round = 0; round < ROUNDS; round++) {
        const order = builds.map((_, i) => i);
        if (round % 2 === 1) order.reverse();
        for (const i of order) {
          const server = servers[i]!;
          const url = `http://127.0.0.1:${server.port}${path}`;
          await wrk.run(url, auth, 1);
          const before = cpuSeconds(server.process.pid!)!;
          const m = await wrk.run(url, auth, SECONDS);
          const used = cpuSeconds(server.process.pid!)! - before;
          // wrk counts a 401 as not 2xx/3xx: the refusal routes must have nothing else.
          const wrongStatus = route === '401' || route === 'unknown' ? m.requests - m.non2xx : m.non2xx;
          if (m.errors > 0 || wrongStatus > 0)
            console.error(
              `  ! ${builds[i]!.name}, ${route}: ${wrongStatus} answers of the wrong status, ${m.errors} errors`,
            );
          cost[i]!.push((used * 1e6) / m.requests);
          rps[i]!.push(m.rps);
        }
      }
      // The host's speed drifts between rounds and moves every server alike: each round's figure
      // is compared with the mean of this code's servers in the same round, and the median taken.
      const reference = (samples: number[][], round: number) =>
        mean(serversOf[0]!.map((j) => samples[j]![round]!));
      const changeOf = (samples: number[][], i: number) =>
        median(samples[i]!.map((x, round) => x / reference(samples, round) - 1));
      builds.forEach((build, i) => {
        const change = (samples: number[][]) =>
          SERVERS_EACH === 1 && i === 0 ? '–' : formatChange(changeOf(samples, i));
        console.log(
          `| ${route} | ${build.name} | ${median(cost[i]!).toFixed(1)} | ${change(cost)} | ${median(rps[i]!).toFixed(0)} | ${change(rps)} | ${cost[i]!.map((x) => x.toFixed(0)).join(' ')} |`,
        );
      });
      if (SERVERS_EACH > 1) {
        for (const [s, setting] of settings.entries()) {
          if (s === 0) continue;
          const change = median(serversOf[s]!.map((i) => changeOf(cost, i)));
          console.log(
            `| ${route} | ${setting.name}: median of its servers | | ${formatChange(change)} | | | |`,
          );
        }
        const gaps = serversOf.map((indices) => {
          const medians = indices.map((i) => median(cost[i]!));
          return Math.max(...medians) / Math.min(...medians) - 1;
        });
        spreads.push(`${route} ${formatChange(Math.max(...gaps))}`);
      }
    }
    if (spreads.length > 0)
      console.log(
        `largest gap in CPU per answer between servers of one setting: ${spreads.join(', ')} (a smaller change is not resolved)`,
      );
    // Every server took the same load, in turns: their peaks compare.
    console.log(
      `peak RSS: ${builds.map((build, i) => `${build.name} ${Math.round(servers[i]!.peakRss() / 2 ** 20)} MB`).join(', ')}`,
    );
  } finally {
    for (const server of servers) await server.stop();
  }
}

function mean(values: number[]): number {
  return values.reduce((sum, x) => sum + x, 0) / values.length;
}

function formatChange(fraction: number): string {
  return `${fraction >= 0 ? '+' : ''}${(fraction * 100).toFixed(0)} %`;
}

function pin(pid: number, cpuList: string): void {
  execFileSync('taskset', ['-a', '-p', '-c', cpuList, String(pid)], { stdio: 'ignore' });
}

await main();

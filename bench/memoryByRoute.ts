/**
 * `npm run bench:memory-by-route`: how the service's memory grows as one process serves the
 * benchmark's routes one after another, as a whole `npm run bench` does. `eds serve` as the image
 * runs it; each route driven by wrk at full load (32 connections) for a 1 s warm-up and --seconds;
 * after start-up and after each route it prints the peak RSS (VmHWM), the resident memory split
 * into anonymous and file-backed pages, and the request thread's V8 spaces (committed / in use)
 * as the service's own metrics report them on its admin port.
 *
 * Options: --store sqlite|postgres --encounters N (100000) --seconds S (10)
 *   --flags="--node-flag …" (added to the image's Node.js flags; the "=" keeps a value that starts with
 *   "--" from being read as an option of its own) --env "VAR=VALUE …"
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildDataset, comparedRoutes, type DatasetPlace, datasetEnv, mintKey } from './datasets.js';
import { listPageWalk } from './listPageWalk.js';
import { buildServer, parseEnvPairs, processMemory, ROOT, startEdsServer } from './processes.js';
import { createWrk, type PathWalk } from './wrk.js';

const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite' },
    encounters: { type: 'string', default: '100000' },
    seconds: { type: 'string', default: '10' },
    flags: { type: 'string', default: '' },
    env: { type: 'string', default: '' },
  },
});
const RESULTS = join(ROOT, 'bench', 'results');
const PLACE: DatasetPlace = { store: values.store, encounters: Number(values.encounters), results: RESULTS };
const MB = 2 ** 20;
const SPACES = ['old', 'new', 'code', 'large_object'] as const;

function residentMemory(pid: number): string {
  const memory = processMemory(pid);
  return [memory.peak, memory.anon, memory.file].map((bytes) => Math.round(bytes / MB)).join(' | ');
}

async function heapSpaces(adminPort: number): Promise<string> {
  const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
  const gauge = (name: string, space: string) =>
    Number(new RegExp(`^eds_${name}\\{space="${space}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN) / MB;
  return SPACES.map(
    (space) =>
      `${gauge('nodejs_heap_space_size_total_bytes', space).toFixed(1)} / ${gauge('nodejs_heap_space_size_used_bytes', space).toFixed(1)}`,
  ).join(' | ');
}

async function main() {
  buildServer(ROOT);
  const env = { ...datasetEnv(PLACE, ''), ...parseEnvPairs(values.env, '--env') };
  const data = await buildDataset(PLACE, '', env, ROOT);
  const token = mintKey(data.organizationId, env, ROOT);
  const flags = values.flags.split(' ').filter(Boolean);
  const server = await startEdsServer(env, flags, undefined, undefined, undefined, true);
  const adminPort = server.adminPort!;
  try {
    const base = `http://127.0.0.1:${server.port}`;
    const routes = await comparedRoutes(base, token);
    const list = routes.list![0];
    const phases: [string, string, string, PathWalk?][] = [
      ['list, offset 0', list, token],
      ['list, a new page each time', list, token, listPageWalk(PLACE.encounters, RESULTS)],
      ['list, offset 10000', `${list}&offset=10000`, token],
      ['encounter detail', ...routes.detail!],
      ...(routes.audio ? [['audio link', ...routes.audio] as [string, string, string]] : []),
      ['malformed key (401)', ...routes['401']!],
    ];
    const wrk = createWrk(RESULTS, 32);
    const seconds = Number(values.seconds);
    console.log(
      `| after | req/s | peak RSS | anonymous | file | V8 ${SPACES.join(' | ')} (MB, committed / in use) |`,
    );
    const row = async (name: string, rps: string) =>
      console.log(
        `| ${name} | ${rps} | ${residentMemory(server.process.pid!)} | ${await heapSpaces(adminPort)} |`,
      );
    await row('start-up', '–');
    for (const [name, path, credential, walk] of phases) {
      const result = await wrk.measure(`${base}${path}`, credential, seconds, walk);
      await row(name, result.rps.toFixed(0));
    }
  } finally {
    await server.stop();
  }
}

await main();

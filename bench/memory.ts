/**
 * `npm run bench:memory`: where the service's resident memory goes under the benchmark's load.
 * `eds serve` as the image runs it, then a list page (offset 0), an encounter detail and a
 * malformed key's 401, each driven by wrk at full load (32 connections) for --seconds; after
 * start-up and after each phase it records the process's peak RSS (VmHWM), its resident memory
 * split into file-backed (the `node` binary's code and other mapped files) and anonymous pages,
 * its threads, and the request thread's V8 heap (bench/memoryProbe.mjs). The same phases run
 * against a bare `node:http` server answering the same bytes (bench/ceiling.mjs): the floor that
 * Node.js itself needs on this machine.
 *
 * --variant "NAME|ENV=V ENV=V|--node-flag --node-flag|NODE" (repeatable) measures other settings
 * of the same code (each a server of its own; NODE: another Node.js binary), taking turns with the
 * image's settings round by round; the report gives each one's median over --rounds.
 * --build NAME=DIR|COMMIT (repeatable) measures another build of the service (a checkout, or a
 * commit built beside the results) with the image's settings, in the same turns.
 *
 * Options: --store sqlite|postgres --encounters N (100000) --seconds S (5) --rounds N (3)
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  buildDataset,
  comparedRoutes,
  type DatasetPlace,
  datasetEnv,
  mintKey,
  recordAnswers,
} from './datasets.js';
import {
  buildServer,
  type Child,
  type ProcessMemory,
  parseBuild,
  parseEnvPairs,
  processMemory,
  ROOT,
  startCeiling,
  startEdsServer,
} from './processes.js';
import { createWrk } from './wrk.js';

const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite' },
    encounters: { type: 'string', default: '100000' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    variant: { type: 'string', multiple: true, default: [] },
    build: { type: 'string', multiple: true, default: [] },
  },
});
const SECONDS = Number(values.seconds);
const ROUNDS = Math.max(1, Number(values.rounds));
const RESULTS = join(ROOT, 'bench', 'results');
mkdirSync(RESULTS, { recursive: true });
const PLACE: DatasetPlace = { store: values.store, encounters: Number(values.encounters), results: RESULTS };
const PROBE = join(ROOT, 'bench', 'memoryProbe.mjs');
const PROBE_FILE = join(RESULTS, 'memory-probe.json');
const MB = 2 ** 20;

interface Variant {
  name: string;
  env: Record<string, string>;
  flags: string[];
  node?: string | undefined;
  /** The checkout it runs (this one unless --build). */
  root?: string;
}

function parseVariant(text: string): Variant {
  const [name, env = '', flags = '', node] = text.split('|');
  const words = (s: string) => s.split(/\s+/).filter(Boolean);
  return {
    name: name!,
    env: parseEnvPairs(env, '--variant'),
    flags: words(flags),
    node: node?.trim() || undefined,
  };
}

const IMAGE: Variant = { name: "the image's settings", env: {}, flags: [] };
const FLOOR = 'bare node:http';
const variants: Variant[] = [
  IMAGE,
  ...values.variant.map(parseVariant),
  ...values.build.map((text) => {
    const { name, root } = parseBuild(text, RESULTS);
    return { name, env: {}, flags: [], root };
  }),
];

interface Sample extends ProcessMemory {
  /** The request thread's V8 heap, committed (the service only). */
  heap?: number;
  heapSpaces?: Record<string, number>;
  /** The phase's answers a second (none for start-up). */
  rps?: number;
}

async function probeHeap(child: Child): Promise<Pick<Sample, 'heap' | 'heapSpaces'>> {
  rmSync(PROBE_FILE, { force: true });
  child.process.kill('SIGUSR2');
  for (let i = 0; i < 100 && !existsSync(PROBE_FILE); i++) await new Promise((r) => setTimeout(r, 50));
  const probe = JSON.parse(readFileSync(PROBE_FILE, 'utf8'));
  return { heap: probe.heap_total, heapSpaces: probe.spaces };
}

const PHASES = ['start-up', 'list, offset 0', 'encounter detail', 'malformed key (401)'] as const;
type Phase = (typeof PHASES)[number];
type Run = Record<Phase, Sample>;

async function main() {
  buildServer(ROOT);
  const env = datasetEnv(PLACE, '');
  const dataset = await buildDataset(PLACE, '', env, ROOT);
  const token = mintKey(dataset.organizationId, env, ROOT);
  const wrk = createWrk(RESULTS, 32);

  // The three answers, recorded once from the service for the floor to serve.
  const recorder = await startEdsServer(env);
  const base = `http://127.0.0.1:${recorder.port}`;
  const routes = await comparedRoutes(base, token);
  const paths: Record<Exclude<Phase, 'start-up'>, [string, string]> = {
    'list, offset 0': routes.list!,
    'encounter detail': routes.detail!,
    'malformed key (401)': routes['401']!,
  };
  const recorded = await recordAnswers(base, paths, (phase) => `/${encodeURIComponent(phase)}`);
  await recorder.stop();
  const recordedFile = join(RESULTS, 'memory-responses.json');
  writeFileSync(recordedFile, JSON.stringify(recorded));

  const measure = async (name: string): Promise<Run> => {
    const variant = variants.find((v) => v.name === name);
    let server: Child & { port: number };
    if (variant) {
      server = await startEdsServer(
        { ...env, ...variant.env, EDS_BENCH_MEMORY_FILE: PROBE_FILE },
        ['--import', PROBE, ...variant.flags],
        variant.root ?? ROOT,
        variant.node,
      );
    } else {
      server = await startCeiling(recordedFile);
    }
    const pid = server.process.pid!;
    try {
      const run = {
        'start-up': { ...processMemory(pid), ...(variant ? await probeHeap(server) : {}) },
      } as Run;
      for (const [phase, [path, auth]] of Object.entries(paths) as [
        Exclude<Phase, 'start-up'>,
        [string, string],
      ][]) {
        const url = variant
          ? `http://127.0.0.1:${server.port}${path}`
          : `http://127.0.0.1:${server.port}/${encodeURIComponent(phase)}`;
        const result = await wrk.measure(url, variant ? auth : undefined, SECONDS);
        run[phase] = { ...processMemory(pid), ...(variant ? await probeHeap(server) : {}), rps: result.rps };
      }
      return run;
    } finally {
      await server.stop();
    }
  };

  const names = [...variants.map((v) => v.name), FLOOR];
  const runs = new Map<string, Run[]>(names.map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    // Each round in a rotated order, so no setting always runs first on a freshly idle machine.
    const order = names.map((_, i) => names[(i + round) % names.length]!);
    for (const name of order) {
      const run = await measure(name);
      runs.get(name)!.push(run);
      console.error(
        `round ${round + 1}: ${name}: ${PHASES.map((p) => `${p} ${Math.round(run[p].peak / MB)} MB`).join(', ')}`,
      );
    }
  }
  report(runs);
  const out = join(RESULTS, `memory-${values.store}-${values.encounters}-${Date.now()}.json`);
  writeFileSync(
    out,
    JSON.stringify({ seconds: SECONDS, rounds: ROUNDS, variants, runs: Object.fromEntries(runs) }, null, 1),
  );
  console.log(`\nwritten: ${out}`);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function report(runs: Map<string, Run[]>) {
  const mb = (n: number | undefined) => (n === undefined ? '–' : String(Math.round(n / MB)));
  const of = (list: Run[], phase: Phase, key: keyof Sample) =>
    list[0]![phase][key] === undefined ? undefined : median(list.map((r) => r[phase][key] as number));
  console.log(
    `\n${values.store}, ${Number(values.encounters).toLocaleString('en-US')} encounters, 32 connections, ${SECONDS} s a phase, medians of ${ROUNDS} rounds (MB)`,
  );
  console.log(
    '| run | after start-up | peak after list | after detail | after 401 | at the end: file / anonymous | request thread heap, start-up → end | threads | req/s list / detail / 401 |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const [name, list] of runs) {
    const rps = PHASES.slice(1)
      .map((p) => Math.round(of(list, p, 'rps') ?? 0).toLocaleString('en-US'))
      .join(' / ');
    const heap =
      of(list, 'start-up', 'heap') === undefined
        ? '–'
        : `${mb(of(list, 'start-up', 'heap'))} → ${mb(of(list, 'malformed key (401)', 'heap'))}`;
    console.log(
      `| ${name} | ${mb(of(list, 'start-up', 'peak'))} | ${mb(of(list, 'list, offset 0', 'peak'))} | ${mb(of(list, 'encounter detail', 'peak'))} | ${mb(of(list, 'malformed key (401)', 'peak'))} | ${mb(of(list, 'malformed key (401)', 'file'))} / ${mb(of(list, 'malformed key (401)', 'anon'))} | ${heap} | ${of(list, 'start-up', 'threads')} | ${rps} |`,
    );
  }
}

await main();

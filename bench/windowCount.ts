/**
 * `npm run bench:window-count`: a window's count alone, the list's total for `start_at`/`end_at`,
 * timed in one process for this code and other builds of it (`--build NAME=DIR|COMMIT`) on the
 * same data set, taking turns round by round. The window is `npm run bench`'s: from the
 * organization's first listable encounter to the middle of its span. On SQLite the counts run one
 * after another; on PostgreSQL 32 callers count at once, as concurrent requests do, so the calls
 * of a turn share a statement. Reports the process's CPU per count (the service's share of the
 * work; PostgreSQL's backends are not in it), counts a second, and each build's change against
 * this code in the same round (the median of those changes).
 *
 * Options: --build NAME=DIR|COMMIT (repeatable) --store sqlite|postgres --encounters N (100000)
 * --rounds N (7) --counts N (20000 on SQLite, 4000 on PostgreSQL)
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { Db } from '../packages/server/src/database/connection.js';
import { buildDataset, type DatasetPlace, datasetEnv, datasetLocation } from './datasets.js';
import { median } from './median.js';
import { type Build, buildServer, parseBuild, ROOT } from './processes.js';

const { values } = parseArgs({
  options: {
    build: { type: 'string', multiple: true, default: [] },
    store: { type: 'string', default: 'sqlite' },
    encounters: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '7' },
    counts: { type: 'string' },
  },
});
const RESULTS = join(ROOT, 'bench', 'results');
mkdirSync(RESULTS, { recursive: true });
const PLACE: DatasetPlace = { store: values.store, encounters: Number(values.encounters), results: RESULTS };
const POSTGRES = values.store === 'postgres';
const ROUNDS = Math.max(1, Number(values.rounds));
const COUNTS = Number(values.counts ?? (POSTGRES ? 4000 : 20000));
const CALLERS = POSTGRES ? 32 : 1;

interface Window {
  startMs: number;
  endMs: number;
}

interface Counting {
  name: string;
  /** The build's Kysely instance, of this code's schema (the builds share the data set). */
  db: Db;
  count: (window: Window) => Promise<number>;
  close: () => Promise<void>;
}

/** A build's own store and count, loaded from its compiled output. */
async function load(build: Build, organizationId: string): Promise<Counting> {
  const dist = join(build.root, 'packages', 'server', 'dist');
  const module = (path: string) => import(pathToFileURL(join(dist, path)).href);
  const { openStore } = await module('database/connection.js');
  const { countEncounters } = await module('readModel/read/counts.js');
  const where = datasetLocation(PLACE, '');
  const store = openStore(
    POSTGRES
      ? { dialect: 'postgres', url: where.url, poolSize: 10, statementTimeoutMs: 10_000 }
      : { dialect: 'sqlite', path: where.url },
  );
  return {
    name: build.name,
    db: store.db,
    count: (window) => countEncounters(store.db, organizationId, window),
    close: () => store.close(),
  };
}

/** `npm run bench`'s window, read from the data set through this code's store. */
async function benchWindow(counting: Counting, organizationId: string): Promise<Window> {
  const row = await counting.db
    .selectFrom('encounters')
    .select((eb) => [eb.fn.min('created_at').as('first'), eb.fn.max('created_at').as('last')])
    .where('organization_id', '=', organizationId)
    .where('demo_training', '=', 0)
    .executeTakeFirstOrThrow();
  const [first, last] = [Number(row.first), Number(row.last)];
  return { startMs: first, endMs: Math.floor((first + last) / 2) };
}

async function round(counting: Counting, window: Window): Promise<{ cpuUs: number; perSecond: number }> {
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      for (let i = 0; i < COUNTS / CALLERS; i++) await counting.count(window);
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const used = process.cpuUsage(cpu);
  return { cpuUs: (used.user + used.system) / COUNTS, perSecond: COUNTS / seconds };
}

async function main() {
  buildServer(ROOT);
  const builds: Build[] = [
    { name: 'this code', root: ROOT },
    ...values.build.map((text) => parseBuild(text, RESULTS)),
  ];
  const dataset = await buildDataset(PLACE, '', datasetEnv(PLACE, ''), ROOT);
  const countings = await Promise.all(builds.map((build) => load(build, dataset.organizationId)));
  try {
    const window = await benchWindow(countings[0]!, dataset.organizationId);
    const answers = await Promise.all(countings.map((counting) => counting.count(window)));
    console.log(
      `window ${new Date(window.startMs).toISOString()} to ${new Date(window.endMs).toISOString()}: ` +
        countings.map((counting, i) => `${counting.name} ${answers[i]}`).join(', '),
    );
    if (new Set(answers).size !== 1) throw new Error('the builds count the window differently');
    const cpu = countings.map(() => [] as number[]);
    const rate = countings.map(() => [] as number[]);
    for (let r = 0; r < ROUNDS; r++) {
      const order = countings.map((_, i) => i);
      if (r % 2) order.reverse();
      for (const i of order) {
        const { cpuUs, perSecond } = await round(countings[i]!, window);
        cpu[i]!.push(cpuUs);
        rate[i]!.push(perSecond);
      }
    }
    console.log(
      `${PLACE.store}, ${PLACE.encounters.toLocaleString('en')} encounters, ${ROUNDS} rounds of ${COUNTS} counts, ${CALLERS} at once`,
    );
    console.log('| build | CPU µs a count | change | counts a second | change | CPU µs a count by round |');
    console.log('|---|---:|---:|---:|---:|---|');
    countings.forEach((counting, i) => {
      const change = (series: number[][]) =>
        i === 0 ? '–' : `${(median(series[i]!.map((v, r) => v / series[0]![r]! - 1)) * 100).toFixed(0)} %`;
      console.log(
        `| ${counting.name} | ${median(cpu[i]!).toFixed(1)} | ${change(cpu)} | ${median(rate[i]!).toFixed(0)} | ${change(rate)} | ${cpu[i]!.map((v) => v.toFixed(1)).join(' ')} |`,
      );
    });
  } finally {
    await Promise.all(countings.map((counting) => counting.close()));
  }
}

await main();

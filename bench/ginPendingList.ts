/**
 * What the size of a GIN index's pending list costs the statements that insert into it: the
 * audit's per-patient index on PostgreSQL (`audit_patient_sets_members`, migration 010) takes a
 * new patient set for every list page never disclosed before. An insert that finds the pending
 * list above `gin_pending_list_limit` merges the whole list into the index before it returns, and
 * that insert is an audit group commit every keyed answer waits for.
 *
 * Each variant gets a scratch table of the sets' shape with the same index, preloaded with sets,
 * then inserts sets of 50 random patients in groups as the audit writer does; the variants take
 * turns, round by round. A variant is a limit in kB (`4096`), `off` (no pending list: fastupdate
 * off), or a limit with `+cleaner`: a second connection merging the list with
 * `gin_clean_pending_list` every 100 ms meanwhile. Prints, per variant, the sets inserted a second
 * and the group inserts' p50, p99 and longest time.
 *
 *   npm run bench:gin-pending-list -- [--variants 4096,256,off,4096+cleaner] [--rounds 3]
 *     [--sets 20000] [--preload 50000] [--group 20]
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { adminQuery, pgUrl } from './datasets.js';
import { median } from './median.js';

const { values } = parseArgs({
  options: {
    variants: { type: 'string', default: '4096,256,off,4096+cleaner' },
    rounds: { type: 'string', default: '3' },
    sets: { type: 'string', default: '20000' },
    preload: { type: 'string', default: '50000' },
    group: { type: 'string', default: '20' },
  },
});
const variants = values.variants.split(',');
const rounds = Number(values.rounds);
const setsPerRound = Number(values.sets);
const preload = Number(values.preload);
const group = Number(values.group);
const PATIENTS = 1_000_000;
const MEMBERS = 50;
const DATABASE = 'eds_bench_gin_pending_list';

const patientIds = Array.from({ length: PATIENTS }, (_, i) => `pat_${String(i).padStart(22, '0')}`);

function randomSet(): string {
  const members = new Set<string>();
  while (members.size < MEMBERS) members.add(patientIds[Math.floor(Math.random() * PATIENTS)]!);
  return JSON.stringify([...members].sort());
}

async function insertSets(client: pg.Client, table: string, count: number): Promise<number[]> {
  const times: number[] = [];
  for (let done = 0; done < count; done += group) {
    const n = Math.min(group, count - done);
    const ids = Array.from({ length: n }, () => randomBytes(16).toString('base64url'));
    const members = Array.from({ length: n }, randomSet);
    const started = performance.now();
    await client.query(
      `INSERT INTO ${table} (set_id, members, last_used_at) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])`,
      [ids, members, ids.map(() => Date.now())],
    );
    times.push(performance.now() - started);
  }
  return times;
}

function tableOf(variant: number): string {
  return `sets_${variant}`;
}

/** Merges the index's pending list every 100 ms on a connection of its own until stopped. */
function startCleaner(index: string): { stop(): Promise<void> } {
  const cleaner = new pg.Client({ connectionString: url });
  let running = true;
  const loop = (async () => {
    await cleaner.connect();
    while (running) {
      await cleaner.query('SELECT gin_clean_pending_list($1::regclass)', [index]);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await cleaner.end();
  })();
  return {
    async stop() {
      running = false;
      await loop;
    },
  };
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}

await adminQuery(`DROP DATABASE IF EXISTS ${DATABASE}`);
await adminQuery(`CREATE DATABASE ${DATABASE}`);
const url = pgUrl(DATABASE);
const client = new pg.Client({ connectionString: url });
await client.connect();
try {
  for (const [i, variant] of variants.entries()) {
    const table = tableOf(i);
    const limit = Number.parseInt(variant, 10);
    const options =
      variant === 'off' ? 'fastupdate = off' : `fastupdate = on, gin_pending_list_limit = ${limit}`;
    await client.query(
      `CREATE TABLE ${table} (set_id text PRIMARY KEY, members text NOT NULL, last_used_at bigint NOT NULL)`,
    );
    await client.query(
      `CREATE INDEX ${table}_members ON ${table} USING gin ((members::jsonb) jsonb_path_ops) WITH (${options})`,
    );
    await insertSets(client, table, preload);
    await client.query(`VACUUM ANALYZE ${table}`);
  }
  const results = new Map<string, { rate: number[]; p50: number[]; p99: number[]; max: number[] }>();
  for (let round = 1; round <= rounds; round++) {
    for (const [i, limit] of variants.entries()) {
      const cleaner = limit.endsWith('+cleaner') ? startCleaner(`${tableOf(i)}_members`) : undefined;
      const started = performance.now();
      const times = await insertSets(client, tableOf(i), setsPerRound);
      const seconds = (performance.now() - started) / 1000;
      await cleaner?.stop();
      const sorted = times.sort((a, b) => a - b);
      const r = results.get(limit) ?? { rate: [], p50: [], p99: [], max: [] };
      r.rate.push(setsPerRound / seconds);
      r.p50.push(percentile(sorted, 50));
      r.p99.push(percentile(sorted, 99));
      r.max.push(sorted.at(-1)!);
      results.set(limit, r);
      console.log(
        `round ${round}, ${limit}: ${Math.round(setsPerRound / seconds)} sets/s, p50 ${percentile(sorted, 50).toFixed(1)} p99 ${percentile(sorted, 99).toFixed(1)} max ${sorted.at(-1)!.toFixed(1)} ms`,
      );
    }
  }
  console.log(
    `\n${preload} sets preloaded, ${setsPerRound} more per round in groups of ${group}, medians of ${rounds} rounds`,
  );
  console.log('| pending list | sets/s | group insert p50 ms | p99 ms | max ms |');
  console.log('|---|---:|---:|---:|---:|');
  for (const [limit, r] of results) {
    console.log(
      `| ${limit} | ${Math.round(median(r.rate))} | ${median(r.p50).toFixed(1)} | ${median(r.p99).toFixed(1)} | ${median(r.max).toFixed(1)} |`,
    );
  }
} finally {
  await client.end();
  await adminQuery(`DROP DATABASE IF EXISTS ${DATABASE}`);
}

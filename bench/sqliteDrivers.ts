/**
 * `npm run bench:sqlite-drivers`: the two SQLite bindings a supported Node.js offers, on one data
 * set: better-sqlite3 (the service's) and Node's built-in node:sqlite. Each runs in a child process
 * of its own (so each has its own peak RSS), in alternating order round by round, the same
 * statements the API's routes run against the read model (an encounter by ID, a document's
 * stored answer, a list page at offset 0 and at offset 10,000) and an import-shaped write
 * (encounter rows inserted in transactions of 1,000). Reports queries/s, p99 and max per
 * statement, rows/s and each driver's peak RSS, as medians over the rounds.
 *
 * Options: --db FILE (a database made by `eds demo --encounters N`; required) --rounds R
 * --seconds S (per statement and round)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { median } from './median.js';

type DriverName = 'better-sqlite3' | 'node:sqlite';
const DRIVERS: DriverName[] = ['better-sqlite3', 'node:sqlite'];

interface Statement {
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): unknown;
}
interface Connection {
  prepare(sql: string): Statement;
  exec(sql: string): void;
  close(): void;
}

interface Measured {
  perSecond: number;
  p99Us: number;
  maxUs: number;
}
interface ChildReport {
  driver: DriverName;
  results: Record<string, Measured>;
  peakRssMb: number;
}

const { values } = parseArgs({
  options: {
    db: { type: 'string' },
    rounds: { type: 'string', default: '4' },
    seconds: { type: 'string', default: '3' },
    child: { type: 'string' },
  },
});

async function open(driver: DriverName, file: string): Promise<Connection> {
  if (driver === 'better-sqlite3') {
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    return db as unknown as Connection;
  }
  const { DatabaseSync } = await import('node:sqlite');
  const db = new DatabaseSync(file);
  db.exec('PRAGMA journal_mode = WAL');
  return db as unknown as Connection;
}

/** Calls `once` for `seconds`, timing each call. */
function measure(seconds: number, once: (i: number) => void): Measured {
  const samples: number[] = [];
  const end = performance.now() + seconds * 1000;
  let i = 0;
  for (let now = performance.now(); now < end; i++) {
    once(i);
    const after = performance.now();
    samples.push(after - now);
    now = after;
  }
  samples.sort((a, b) => a - b);
  const total = samples.reduce((a, b) => a + b, 0);
  return {
    perSecond: (samples.length / total) * 1000,
    p99Us: (samples[Math.floor(samples.length * 0.99)] ?? 0) * 1000,
    maxUs: (samples.at(-1) ?? 0) * 1000,
  };
}

async function runChild(driver: DriverName, file: string, seconds: number): Promise<ChildReport> {
  const db = await open(driver, file);
  const org = (
    db.prepare('SELECT organization_id AS o FROM encounter_counts ORDER BY count DESC LIMIT 1').get() as {
      o: string;
    }
  ).o;
  const encounters = db
    .prepare('SELECT encounter_id AS id FROM encounter_reads WHERE organization_id = ? LIMIT 5000')
    .all(org)
    .map((r) => (r as { id: string }).id);
  const documents = db
    .prepare(
      `SELECT d.encounter_id AS e, d.document_id AS d FROM document_reads d
       WHERE d.organization_id = ? AND d.detail IS NOT NULL LIMIT 5000`,
    )
    .all(org) as { e: string; d: string }[];
  const encounterRead = db.prepare(
    'SELECT organization_id, demo_training, patient_id, summary, etag FROM encounter_reads WHERE encounter_id = ?',
  );
  const documentRead = db.prepare(
    `SELECT e.organization_id, e.demo_training, d.detail AS body, d.detail_etag AS etag
     FROM encounter_reads e JOIN document_reads d ON d.encounter_id = e.encounter_id
     WHERE e.encounter_id = ? AND d.document_id = ? AND d.organization_id = ?`,
  );
  const page = db.prepare(
    `SELECT summary, etag, patient_id FROM encounter_reads
     WHERE organization_id = ? AND demo_training = 0 AND created_at >= ? AND created_at < ?
     ORDER BY created_at DESC, encounter_id DESC LIMIT ? OFFSET ?`,
  );
  const results: Record<string, Measured> = {
    'encounter detail': measure(seconds, (i) => encounterRead.get(encounters[i % encounters.length])),
    'document detail': measure(seconds, (i) => {
      const doc = documents[i % documents.length]!;
      documentRead.get(doc.e, doc.d, org);
    }),
    'list page, offset 0': measure(seconds, () => page.all(org, 0, 8.64e15, 50, 0)),
    'list page, offset 10,000': measure(seconds, () => page.all(org, 0, 8.64e15, 50, 10_000)),
  };
  // Import-shaped writes into a table of their own, dropped after.
  db.exec(`CREATE TABLE IF NOT EXISTS bench_encounters (
    id TEXT PRIMARY KEY, organization_id TEXT NOT NULL, patient_id TEXT NOT NULL,
    encounter_type TEXT NOT NULL, status TEXT NOT NULL, date_of_service INTEGER NOT NULL,
    created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, demo_training INTEGER NOT NULL)`);
  const insert = db.prepare('INSERT INTO bench_encounters VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)');
  let row = 0;
  const batch = measure(seconds, () => {
    db.exec('BEGIN');
    for (let i = 0; i < 1000; i++, row++) {
      insert.run(`enc_${driver}_${row}`, org, `pat_${row % 997}`, 'ambient', 'completed', row, row, row, 0);
    }
    db.exec('COMMIT');
  });
  results['import rows (transactions of 1,000)'] = {
    perSecond: batch.perSecond * 1000,
    p99Us: batch.p99Us,
    maxUs: batch.maxUs,
  };
  db.exec('DROP TABLE bench_encounters');
  db.close();
  const status = readFileSync('/proc/self/status', 'utf8');
  const peakRssMb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
  return { driver, results, peakRssMb };
}

async function main(): Promise<void> {
  if (values.child) {
    const report = await runChild(values.child as DriverName, values.db!, Number(values.seconds));
    process.stdout.write(JSON.stringify(report));
    return;
  }
  if (!values.db || !existsSync(values.db)) {
    throw new Error('--db FILE: a database made by `eds demo --encounters N` (e.g. 100000)');
  }
  const reports: ChildReport[] = [];
  for (let round = 0; round < Number(values.rounds); round++) {
    const order = round % 2 === 0 ? DRIVERS : [...DRIVERS].reverse();
    for (const driver of order) {
      const child = spawnSync(
        process.execPath,
        [
          '--import',
          'tsx',
          import.meta.filename,
          '--child',
          driver,
          '--db',
          values.db,
          '--seconds',
          values.seconds!,
        ],
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 20 },
      );
      if (child.status !== 0) throw new Error(`${driver} failed (${child.status})`);
      const report = JSON.parse(child.stdout) as ChildReport;
      reports.push(report);
      console.error(`round ${round + 1}, ${driver}: peak RSS ${report.peakRssMb.toFixed(0)} MB`);
    }
  }
  console.log(
    `\n${process.version}, ${values.rounds} rounds of ${values.seconds} s per statement, medians\n`,
  );
  console.log('| statement | better-sqlite3 /s | p99 µs | max µs | node:sqlite /s | p99 µs | max µs |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  const names = Object.keys(reports[0]!.results);
  const of = (driver: DriverName) => reports.filter((r) => r.driver === driver);
  for (const name of names) {
    const cells = DRIVERS.map((driver) => {
      const rs = of(driver).map((r) => r.results[name]!);
      return [
        median(rs.map((r) => r.perSecond)).toFixed(0),
        median(rs.map((r) => r.p99Us)).toFixed(0),
        median(rs.map((r) => r.maxUs)).toFixed(0),
      ].join(' | ');
    });
    console.log(`| ${name} | ${cells.join(' | ')} |`);
  }
  const rss = DRIVERS.map((d) => median(of(d).map((r) => r.peakRssMb)).toFixed(0));
  console.log(`| peak RSS (MB) | ${rss[0]} | | | ${rss[1]} | | |`);
}

await main();

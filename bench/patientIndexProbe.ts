/**
 * A probe, not part of `npm run bench`: what the audit's per-patient index costs a list page
 * whose set of 50 patients was never disclosed before, in the layout of migration 009 (one B-tree
 * row per patient and set) and in an inverted index whose inserts are appended and merged later
 * (SQLite: a contentless FTS5 table, detail=none, one token per patient, as migration 010 made
 * it; PostgreSQL: a GIN index with fast update on the members' JSON). Each store starts from
 * 20,000 sets over 10,000 patients, then writes groups of 30 new sets, durably (SQLite FULL,
 * PostgreSQL synchronous commit), alternating layouts; it prints time and WAL bytes per set and
 * one patient's lookup.
 *
 *   node --import tsx bench/patientIndexProbe.ts [--store sqlite|postgres]
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { patientTokenQuery, patientTokensOf } from '../packages/server/src/store/patientTokens.js';

const { values } = parseArgs({ options: { store: { type: 'string', default: 'sqlite' } } });
const PATIENTS = Array.from({ length: 10_000 }, (_, i) => `pat_${String(i).padStart(22, '0')}`);
const WARM_SETS = 20_000;
const GROUPS = 100;
const GROUP_SIZE = 30;

interface NewSet {
  id: string;
  members: string[];
}

let made = 0;
function newSet(): NewSet {
  const members = new Set<string>();
  while (members.size < 50) members.add(PATIENTS[Math.floor(Math.random() * PATIENTS.length)]!);
  return { id: `set_${made++}_${Math.random().toString(36).slice(2, 12)}`, members: [...members].sort() };
}
const groupOf = (size: number) => Array.from({ length: size }, newSet);

interface Layout {
  name: string;
  write(sets: NewSet[]): Promise<void> | void;
  walBytes(): Promise<number> | number;
  resetWal(): Promise<void> | void;
  lookup(patientId: string): Promise<number> | number;
}

function sqliteLayouts(dir: string): Layout[] {
  /** A database file with the sets table and `index`, written and read as the layout says. */
  const layout = (
    name: string,
    index: string,
    indexSet: (db: SQLite.Database) => (rowid: number | bigint, set: NewSet) => void,
    lookupSql: string,
    lookupValue: (patientId: string) => string,
  ): Layout => {
    const file = join(dir, `${name.replace(/\W+/g, '-')}.db`);
    const db = new SQLite(file);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('wal_autocheckpoint = 0');
    db.exec(`CREATE TABLE sets (id INTEGER PRIMARY KEY AUTOINCREMENT, set_id TEXT NOT NULL UNIQUE, members TEXT NOT NULL, last_used_at INTEGER NOT NULL);
${index}`);
    const insertSet = db.prepare('INSERT INTO sets (set_id, members, last_used_at) VALUES (?, ?, ?)');
    const addToIndex = indexSet(db);
    const lookup = db.prepare(lookupSql).pluck();
    return {
      name,
      write: db.transaction((sets: NewSet[]) => {
        for (const set of sets) {
          addToIndex(insertSet.run(set.id, JSON.stringify(set.members), Date.now()).lastInsertRowid, set);
        }
      }),
      walBytes: () => (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0),
      resetWal: () => void db.pragma('wal_checkpoint(TRUNCATE)'),
      lookup: (patient) => lookup.get(lookupValue(patient)) as number,
    };
  };
  return [
    layout(
      'SQLite, B-tree per patient (009)',
      'CREATE TABLE set_patients (patient_id TEXT NOT NULL, set_id TEXT NOT NULL, PRIMARY KEY (patient_id, set_id)) WITHOUT ROWID;',
      (db) => {
        const member = db.prepare('INSERT INTO set_patients VALUES (?, ?)');
        return (_rowid, set) => {
          for (const patient of set.members) member.run(patient, set.id);
        };
      },
      'SELECT count(*) AS n FROM set_patients WHERE patient_id = ?',
      (patient) => patient,
    ),
    // The service's own table and tokens (migration 010, store/patientTokens.ts).
    layout(
      'SQLite, FTS5 contentless (010)',
      "CREATE VIRTUAL TABLE set_tokens USING fts5(tokens, detail=none, content='', contentless_delete=1, tokenize='ascii');",
      (db) => {
        const tokens = db.prepare('INSERT INTO set_tokens (rowid, tokens) VALUES (?, ?)');
        return (rowid, set) => void tokens.run(rowid, patientTokensOf(set.members));
      },
      'SELECT count(*) AS n FROM set_tokens WHERE set_tokens MATCH ?',
      patientTokenQuery,
    ),
  ];
}

async function postgresLayouts(url: string): Promise<{ layouts: Layout[]; close(): Promise<void> }> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query('DROP DATABASE IF EXISTS eds_patient_index_probe');
  await admin.query('CREATE DATABASE eds_patient_index_probe');
  const probeUrl = new URL(url);
  probeUrl.pathname = '/eds_patient_index_probe';
  const db = new pg.Client({ connectionString: probeUrl.toString() });
  await db.connect();
  await db.query(`CREATE TABLE sets_bt (set_id text PRIMARY KEY, members text NOT NULL, last_used_at bigint NOT NULL);
CREATE TABLE set_patients (patient_id text NOT NULL, set_id text NOT NULL, PRIMARY KEY (patient_id, set_id));
CREATE TABLE sets_gin (set_id text PRIMARY KEY, members text NOT NULL, last_used_at bigint NOT NULL);
CREATE INDEX sets_gin_members ON sets_gin USING gin ((members::jsonb) jsonb_path_ops) WITH (fastupdate = on);`);
  const insert = (table: string) =>
    `INSERT INTO ${table} SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[]) ON CONFLICT DO NOTHING`;
  const params = (sets: NewSet[]) => [
    sets.map((s) => s.id),
    sets.map((s) => JSON.stringify(s.members)),
    sets.map(() => Date.now()),
  ];
  let lsn = '0/0';
  const wal = async () => {
    const { rows } = await db.query('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1) AS d', [lsn]);
    return Number(rows[0].d);
  };
  const resetWal = async () => {
    await db.query('CHECKPOINT');
    lsn = (await db.query('SELECT pg_current_wal_lsn() AS l')).rows[0].l;
  };
  const count = async (text: string, value: string) => Number((await db.query(text, [value])).rows[0].n);
  return {
    layouts: [
      {
        name: 'PostgreSQL, B-tree per patient (009)',
        write: async (sets) => {
          await db.query({
            name: 'bt',
            text: `WITH s AS (${insert('sets_bt')} RETURNING set_id, members)
INSERT INTO set_patients SELECT json_array_elements_text(s.members::json), s.set_id FROM s ON CONFLICT DO NOTHING`,
            values: params(sets),
          });
        },
        walBytes: wal,
        resetWal,
        lookup: (patient) => count('SELECT count(*) AS n FROM set_patients WHERE patient_id = $1', patient),
      },
      {
        name: 'PostgreSQL, GIN with fast update',
        write: async (sets) => {
          await db.query({ name: 'gin', text: insert('sets_gin'), values: params(sets) });
        },
        walBytes: wal,
        resetWal,
        lookup: async (patient) => {
          // What a background job (or autovacuum) does: merge the pending list.
          await db.query(`SELECT gin_clean_pending_list('sets_gin_members'::regclass)`);
          return count(
            'SELECT count(*) AS n FROM sets_gin WHERE members::jsonb @> jsonb_build_array($1::text)',
            patient,
          );
        },
      },
    ],
    close: async () => {
      await db.end();
      await admin.query('DROP DATABASE IF EXISTS eds_patient_index_probe');
      await admin.end();
    },
  };
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'eds-patient-index-'));
  const pgProbe =
    values.store === 'postgres'
      ? await postgresLayouts(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres')
      : undefined;
  const layouts = pgProbe?.layouts ?? sqliteLayouts(dir);
  try {
    for (const layout of layouts) {
      for (let i = 0; i < WARM_SETS / 100; i++) await layout.write(groupOf(100));
    }
    for (let round = 0; round < 3; round++) {
      for (const layout of layouts) {
        await layout.resetWal();
        const started = performance.now();
        for (let g = 0; g < GROUPS; g++) await layout.write(groupOf(GROUP_SIZE));
        const perSet = ((performance.now() - started) * 1000) / (GROUPS * GROUP_SIZE);
        const walKiB = (await layout.walBytes()) / (GROUPS * GROUP_SIZE) / 1024;
        console.log(
          `${layout.name}, round ${round + 1}: ${perSet.toFixed(0)} µs and ${walKiB.toFixed(1)} KiB of WAL a new set`,
        );
      }
    }
    for (const layout of layouts) {
      const started = performance.now();
      const sets = await layout.lookup(PATIENTS[0]!);
      console.log(
        `${layout.name}: one patient's ${sets} sets found in ${(performance.now() - started).toFixed(2)} ms`,
      );
    }
  } finally {
    await pgProbe?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

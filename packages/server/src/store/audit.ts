import type SQLite from 'better-sqlite3';
import { CompiledQuery, type SelectQueryBuilder, sql } from 'kysely';
import { type Db, pgPoolOf, sqliteHandleOf } from '../database/connection.js';
import { isSqlite } from '../database/dialect.js';
import { PriorityQueue } from '../database/priorityQueue.js';
import type { Database } from '../database/schema.js';
import { AUDIT_COLUMNS, type AuditRecord, auditRowsOf } from './auditRows.js';
import { patientSetsOf, SET_LAST_USED_STEP_MS } from './patientSets.js';
import { patientTokenQuery } from './patientTokens.js';
import { sqliteAuditWriter } from './sqliteAuditWriter.js';

/** Each column's PostgreSQL type, for the arrays `unnest` turns back into rows. */
const AUDIT_PG_TYPES: Record<(typeof AUDIT_COLUMNS)[number], string> = {
  at: 'bigint',
  request_id: 'text',
  organization_id: 'text',
  key_id: 'text',
  method: 'text',
  route: 'text',
  encounter_id: 'text',
  document_id: 'text',
  status: 'integer',
  reason_code: 'text',
  duration_ms: 'double precision',
  request_count: 'integer',
  patient_set: 'text',
};

/**
 * PostgreSQL's group insert: one statement whose text never changes, each column sent as one
 * array parameter and turned back into rows by `unnest`, all three tables in one data-modifying
 * CTE (one statement is its own transaction: one round trip per group commit). A multi-row VALUES
 * list had a placeholder per cell, and compiling that text on the request thread cost more than
 * the commit.
 *
 * The group's sets are upserted: a set already stored is locked against a concurrent prune
 * (ON CONFLICT DO UPDATE locks the row even where its WHERE skips the update) and gets a newer
 * `last_used_at` when its own is over a step old. A new set's members reach the per-patient
 * index through the GIN index on its JSON (migration 010): the request thread sends one string
 * per set. A set is stored once however many processes disclose it at the same moment, since the
 * second waits on the first's unique key and then finds it.
 */
const PG_GROUP_INSERT = (() => {
  let n = 0;
  const p = (type: string) => `$${++n}::${type}[]`;
  const sets = `unnest(${p('text')}, ${p('text')}, ${p('bigint')})`;
  const audit = `unnest(${Object.values(AUDIT_PG_TYPES).map(p).join(', ')})`;
  return `WITH sets AS (
  INSERT INTO audit_patient_sets (set_id, members, last_used_at) SELECT * FROM ${sets}
  ON CONFLICT (set_id) DO UPDATE SET last_used_at = EXCLUDED.last_used_at
    WHERE audit_patient_sets.last_used_at < EXCLUDED.last_used_at - ${SET_LAST_USED_STEP_MS}
)
INSERT INTO audit_log (${AUDIT_COLUMNS.join(', ')}) SELECT * FROM ${audit}`;
})();

function columnArrays<Row extends object>(rows: readonly Row[], columns: readonly string[]): unknown[][] {
  return columns.map((column) => rows.map((row) => (row as Record<string, unknown>)[column] ?? null));
}

function pgGroupParameters(records: readonly AuditRecord[]): unknown[] {
  const { setIds, sets } = patientSetsOf(records);
  return [
    sets.map(([id]) => id),
    sets.map(([, set]) => set.membersJson),
    sets.map(([, set]) => set.lastUsedAt),
    ...columnArrays(auditRowsOf(records, setIds), AUDIT_COLUMNS),
  ];
}

/** One writer per connection: its statements are prepared once. */
const sqliteWriters = new WeakMap<SQLite.Database, (rows: readonly AuditRecord[]) => void>();

/**
 * Writes a group of audit records and their patient sets in one transaction on the given
 * connection (Kysely: PostgreSQL, or an in-memory SQLite that no writer thread can open).
 */
export async function insertAuditRecords(db: Db, records: readonly AuditRecord[]): Promise<void> {
  if (records.length === 0) return;
  const sqlite = sqliteHandleOf(db);
  if (sqlite === undefined) {
    const pool = pgPoolOf(db);
    // Named, the statement is parsed and planned once per connection, not once per group.
    if (pool)
      await pool.query({
        name: 'eds_audit_group',
        text: PG_GROUP_INSERT,
        values: pgGroupParameters(records),
      });
    else await db.executeQuery(CompiledQuery.raw(PG_GROUP_INSERT, pgGroupParameters(records)));
    return;
  }
  let write = sqliteWriters.get(sqlite);
  if (write === undefined) {
    write = sqliteAuditWriter(sqlite);
    sqliteWriters.set(sqlite, write);
  }
  const writeGroup = write;
  // Holding Kysely's connection keeps this transaction from interleaving with one of its own.
  await db.connection().execute(async () => writeGroup(records));
}

export interface AuditQuery {
  organizationId?: string | undefined;
  sinceMs?: number | undefined;
  untilMs?: number | undefined;
}

/** Streams audit rows in time order, a page at a time (an audit log can be large). */
export async function* readAudit(db: Db, query: AuditQuery, pageSize = 1000) {
  let after = { at: Number.NEGATIVE_INFINITY, id: 0 };
  for (;;) {
    let q = db.selectFrom('audit_log').selectAll();
    if (query.organizationId !== undefined) q = q.where('organization_id', '=', query.organizationId);
    if (query.sinceMs !== undefined) q = q.where('at', '>=', query.sinceMs);
    if (query.untilMs !== undefined) q = q.where('at', '<', query.untilMs);
    if (after.id !== 0) {
      const cursor = after;
      q = q.where((eb) =>
        eb.or([eb('at', '>', cursor.at), eb.and([eb('at', '=', cursor.at), eb('id', '>', cursor.id)])]),
      );
    }
    const rows = await q.orderBy('at').orderBy('id').limit(pageSize).execute();
    for (const row of rows) yield row;
    if (rows.length < pageSize) return;
    const last = rows[rows.length - 1]!;
    after = { at: last.at, id: last.id };
  }
}

export interface DisclosureQuery {
  patientId: string;
  organizationId?: string | undefined;
  sinceMs?: number | undefined;
  untilMs?: number | undefined;
}

interface Disclosure {
  at: number;
  request_id: string;
  organization_id: string | null;
  key_id: string | null;
  route: string;
}

/** Rows fetched from one set's records at a time while merging. */
const SET_READ_BATCH = 100;

/** Sets per statement when finding each set's newest record. */
const SET_HEAD_CHUNK = 500;

/** One set's records in the merge: those fetched, and where the next fetch starts. */
interface SetStream {
  setId: string;
  rows: Disclosure[];
  next: number;
  /** No record older than the last fetched one is left. */
  done: boolean;
  /** Before the first fetch: the set's newest time, an upper bound for all its records. */
  headAt: number;
}

/** The stream's next record's place in newest-first order (an unfetched set sorts first at its time). */
function headOf(stream: SetStream): { at: number; requestId: string } {
  const row = stream.rows[stream.next];
  return row ? { at: row.at, requestId: row.request_id } : { at: stream.headAt, requestId: '\u{10ffff}' };
}

function newerHead(a: SetStream, b: SetStream): boolean {
  const x = headOf(a);
  const y = headOf(b);
  return x.at !== y.at ? x.at > y.at : x.requestId > y.requestId;
}

/**
 * Every audited answer that carried one patient's data, newest first, streamed: the patient's
 * sets from the per-patient index (setsOfPatient), each set's newest matching time in one grouped statement
 * (an index seek per set), then a merge that reads a set's records, newest first from the
 * (patient_set, at, request_id) index and a batch at a time, only when that set is next in line.
 * A set named by millions of records (a page polled for months) is read only as far as the
 * report goes, a patient in thousands of sets costs no statement per set before the first line,
 * and every record is read once. Filters apply in every statement.
 */
export async function* readDisclosures(
  db: Db,
  query: DisclosureQuery,
  batchSize = SET_READ_BATCH,
): AsyncGenerator<Disclosure> {
  const filtered = <Q extends SelectQueryBuilder<Database, 'audit_log', object>>(q: Q): Q => {
    let out = q;
    if (query.organizationId !== undefined)
      out = out.where('organization_id', '=', query.organizationId) as Q;
    if (query.sinceMs !== undefined) out = out.where('at', '>=', query.sinceMs) as Q;
    if (query.untilMs !== undefined) out = out.where('at', '<', query.untilMs) as Q;
    return out;
  };
  const setIds = await setsOfPatient(db, query.patientId);
  const queue = new PriorityQueue<SetStream>(newerHead);
  for (let i = 0; i < setIds.length; i += SET_HEAD_CHUNK) {
    const heads = await filtered(
      db
        .selectFrom('audit_log')
        .select(['patient_set', (eb) => eb.fn.max('at').as('newest')])
        .where('patient_set', 'in', setIds.slice(i, i + SET_HEAD_CHUNK)),
    )
      .groupBy('patient_set')
      .execute();
    for (const head of heads) {
      queue.push({ setId: head.patient_set!, rows: [], next: 0, done: false, headAt: Number(head.newest) });
    }
  }
  const fetchNext = async (stream: SetStream) => {
    const last = stream.rows[stream.rows.length - 1];
    let q = filtered(
      db
        .selectFrom('audit_log')
        .select(['at', 'request_id', 'organization_id', 'key_id', 'route'])
        .where('patient_set', '=', stream.setId),
    );
    if (last !== undefined) {
      // `at <=` bounds the index range; the OR then only decides the rows of that one instant.
      q = q
        .where('at', '<=', last.at)
        .where((eb) =>
          eb.or([
            eb('at', '<', last.at),
            eb.and([eb('at', '=', last.at), eb('request_id', '<', last.request_id)]),
          ]),
        );
    }
    stream.rows = await q.orderBy('at', 'desc').orderBy('request_id', 'desc').limit(batchSize).execute();
    stream.next = 0;
    stream.done = stream.rows.length < batchSize;
  };
  for (;;) {
    const stream = queue.pop();
    if (stream === undefined) return;
    if (stream.next >= stream.rows.length) {
      // First in line without a record in hand: fetch (its first batch, or its next one).
      await fetchNext(stream);
      if (stream.rows.length > 0) queue.push(stream);
      continue;
    }
    const row = stream.rows[stream.next++]!;
    yield row;
    if (stream.next < stream.rows.length) queue.push(stream);
    else if (!stream.done) {
      // Its remaining records are no newer than the last one given.
      stream.headAt = row.at;
      queue.push(stream);
    }
  }
}

/**
 * The sets that hold a patient, from the per-patient index of migration 010: on SQLite the FTS5
 * table of member tokens (its rowid is the set's id), on PostgreSQL the GIN index on the members.
 * Both find exactly the patient's sets: a token stands for one patient ID, and jsonb containment
 * compares whole strings.
 */
async function setsOfPatient(db: Db, patientId: string): Promise<string[]> {
  const { rows } = await setsOfPatientQuery(db, patientId).execute(db);
  return rows.map((row) => row.set_id);
}

/** The statement of setsOfPatient (exported so a test can ask the planner how it runs). */
export function setsOfPatientQuery(db: Db, patientId: string) {
  return isSqlite(db)
    ? sql<{ set_id: string }>`SELECT s.set_id FROM audit_set_tokens t
        JOIN audit_patient_sets s ON s.id = t.rowid
        WHERE audit_set_tokens MATCH ${patientTokenQuery(patientId)}`
    : sql<{ set_id: string }>`SELECT set_id FROM audit_patient_sets
        WHERE members::jsonb @> jsonb_build_array(${patientId}::text)`;
}

export interface PruneCounts {
  audit_log: number;
  audit_patient_sets: number;
}

/**
 * Deletes audit records older than `beforeMs`, then the patient sets that no record names any
 * more, with their entries in the per-patient index, in transactions of at most about
 * `batchSize` rows or entries each, so a large prune never holds the audit writer up for long.
 * Returns the rows deleted per table.
 */
export async function pruneAudit(db: Db, beforeMs: number, batchSize = 5000): Promise<PruneCounts> {
  const deleted: PruneCounts = { audit_log: 0, audit_patient_sets: 0 };
  for (;;) {
    const result = await db
      .deleteFrom('audit_log')
      .where('id', 'in', (eb) =>
        eb.selectFrom('audit_log').select('id').where('at', '<', beforeMs).limit(batchSize),
      )
      .executeTakeFirst();
    const n = Number(result.numDeletedRows);
    deleted.audit_log += n;
    if (n < batchSize) break;
  }
  for (;;) {
    const batch = await deleteSetBatch(db, beforeMs, batchSize);
    deleted.audit_patient_sets += batch.sets;
    if (!batch.more) break;
  }
  return deleted;
}

/**
 * One batch of unused sets, in one transaction of about `batchSize` members (sets are taken
 * until their members reach it, at least one): each member is an entry of the per-patient index
 * to delete with its set. A set is unused when no record names it; `last_used_at` (older than
 * the cut by more than its step) only narrows the candidates cheaply. The check that no record
 * names it is what keeps a set whose record was written during the prune, with a time before the
 * cut (a lagging clock, or a cut at "now"). On PostgreSQL the candidates are locked with SKIP
 * LOCKED, so a set a writer is naming right now is passed over, the prune never waits on a
 * writer, and a writer that names a set after this batch locked it waits, then stores it afresh.
 */
async function deleteSetBatch(db: Db, beforeMs: number, batchSize: number) {
  return db.transaction().execute(async (tx) => {
    let candidates = tx
      .selectFrom('audit_patient_sets as s')
      .select(['s.set_id', 's.members'])
      .where('s.last_used_at', '<', beforeMs - SET_LAST_USED_STEP_MS)
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom('audit_log as a').select('a.id').whereRef('a.patient_set', '=', 's.set_id'))),
      )
      .limit(batchSize);
    if (!isSqlite(tx)) candidates = candidates.forUpdate().skipLocked();
    const found = await candidates.execute();
    let chosen: string[] = [];
    let memberCount = 0;
    for (const set of found) {
      if (chosen.length > 0 && memberCount >= batchSize) break;
      chosen.push(set.set_id);
      memberCount += (JSON.parse(set.members) as string[]).length;
    }
    if (chosen.length === 0) return { more: false, sets: 0 };
    // A full page of candidates, or one cut short by its members, leaves more for the next batch.
    const more = found.length >= batchSize || chosen.length < found.length;
    // Checked again now that the sets are locked (PostgreSQL: a fresh snapshot per statement):
    // a writer that named one of them just before the lock has committed by now and shows here,
    // and any later one waits for this transaction.
    const named = await tx
      .selectFrom('audit_log')
      .select('patient_set')
      .distinct()
      .where('patient_set', 'in', chosen)
      .execute();
    if (named.length > 0) {
      const inUse = new Set(named.map((row) => row.patient_set));
      chosen = chosen.filter((setId) => !inUse.has(setId));
      if (chosen.length === 0) return { more, sets: 0 };
    }
    // PostgreSQL's GIN index forgets a deleted row by itself; SQLite's token rows go first.
    if (isSqlite(tx)) {
      await sql`DELETE FROM audit_set_tokens WHERE rowid IN (
        SELECT id FROM audit_patient_sets WHERE set_id IN (${sql.join(chosen)}))`.execute(tx);
    }
    const sets = await tx.deleteFrom('audit_patient_sets').where('set_id', 'in', chosen).executeTakeFirst();
    return { more, sets: Number(sets.numDeletedRows) };
  });
}

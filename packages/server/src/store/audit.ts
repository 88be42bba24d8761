import type SQLite from 'better-sqlite3';
import { CompiledQuery, type Insertable, sql } from 'kysely';
import { type Db, sqliteHandleOf } from './database.js';
import type { AuditDisclosuresTable, AuditInsert } from './schema.js';

const AUDIT_COLUMNS = [
  'at',
  'request_id',
  'organization_id',
  'key_id',
  'method',
  'route',
  'encounter_id',
  'document_id',
  'status',
  'reason_code',
  'duration_ms',
  'request_count',
] as const satisfies readonly (keyof AuditInsert)[];

/** An audit record and the patients whose data its answer carried (none for refusals). */
export type AuditRecord = AuditInsert & { patient_ids?: readonly string[] | undefined };

const DISCLOSURE_COLUMNS = [
  'patient_id',
  'at',
  'request_id',
  'organization_id',
  'key_id',
  'route',
] as const satisfies readonly (keyof AuditDisclosureInsert)[];

type AuditDisclosureInsert = Insertable<AuditDisclosuresTable>;

function disclosuresOf(rows: readonly AuditRecord[]): AuditDisclosureInsert[] {
  const out: AuditDisclosureInsert[] = [];
  for (const row of rows) {
    for (const patientId of row.patient_ids ?? []) {
      out.push({
        patient_id: patientId,
        at: row.at,
        request_id: row.request_id,
        organization_id: row.organization_id ?? null,
        key_id: row.key_id ?? null,
        route: row.route,
      });
    }
  }
  return out;
}

function auditRowOf({ patient_ids: _, ...row }: AuditRecord): AuditInsert {
  // An explicit NULL would override the column default: a row stands for one request unless told.
  return { ...row, request_count: row.request_count ?? 1 };
}

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
};
const DISCLOSURE_PG_TYPES: Record<(typeof DISCLOSURE_COLUMNS)[number], string> = {
  patient_id: 'text',
  at: 'bigint',
  request_id: 'text',
  organization_id: 'text',
  key_id: 'text',
  route: 'text',
};

/**
 * PostgreSQL's group insert: one statement whose text never changes, each column sent as one
 * array parameter and turned back into rows by `unnest`, both tables in one data-modifying CTE
 * (one statement is its own transaction: one round trip per group commit). A multi-row VALUES
 * list had a placeholder per cell, about 10,000 for a group of 32 list pages, and compiling that
 * text on the request thread cost more than the commit.
 */
const PG_GROUP_INSERT = (() => {
  let n = 0;
  const unnest = (types: Record<string, string>) =>
    `unnest(${Object.values(types)
      .map((type) => `$${++n}::${type}[]`)
      .join(', ')})`;
  const auditFrom = unnest(AUDIT_PG_TYPES);
  const disclosuresFrom = unnest(DISCLOSURE_PG_TYPES);
  return `WITH audited AS (INSERT INTO audit_log (${AUDIT_COLUMNS.join(', ')}) SELECT * FROM ${auditFrom})
INSERT INTO audit_disclosures (${DISCLOSURE_COLUMNS.join(', ')}) SELECT * FROM ${disclosuresFrom}`;
})();

function columnArrays<Row extends object>(rows: readonly Row[], columns: readonly string[]): unknown[][] {
  return columns.map((column) => rows.map((row) => (row as Record<string, unknown>)[column] ?? null));
}

/**
 * Writes a group of audit records and their disclosures in one transaction on the given
 * connection (Kysely: PostgreSQL, or SQLite where no separate writer thread can open the file).
 */
export async function insertAuditRecords(db: Db, rows: readonly AuditRecord[]): Promise<void> {
  if (rows.length === 0) return;
  const audit = rows.map(auditRowOf);
  const disclosures = disclosuresOf(rows);
  if (!sqliteHandleOf(db)) {
    const parameters = [
      ...columnArrays(audit, AUDIT_COLUMNS),
      ...columnArrays(disclosures, DISCLOSURE_COLUMNS),
    ];
    await db.executeQuery(CompiledQuery.raw(PG_GROUP_INSERT, parameters));
    return;
  }
  await db.transaction().execute(async (tx) => {
    for (let i = 0; i < audit.length; i += 400) {
      await tx
        .insertInto('audit_log')
        .values(audit.slice(i, i + 400))
        .execute();
    }
    for (let i = 0; i < disclosures.length; i += 1000) {
      await tx
        .insertInto('audit_disclosures')
        .values(disclosures.slice(i, i + 1000))
        .execute();
    }
  });
}

/** Rows per multi-row insert: one statement step per group instead of per row. */
const GROUP = 32;

/**
 * A writer of audit groups on a better-sqlite3 connection of its own (the audit writer thread's).
 * Two insert shapes per table are prepared once, a group of rows and a single row: SQL text that
 * changed with every group size would be prepared afresh each time, which cost more than the
 * inserts themselves under load, and a row at a time paid a statement step per request.
 */
export function sqliteAuditWriter(sqlite: SQLite.Database): (rows: readonly AuditRecord[]) => void {
  const audit = groupedInsert(sqlite, 'audit_log', AUDIT_COLUMNS);
  const disclosures = groupedInsert(sqlite, 'audit_disclosures', DISCLOSURE_COLUMNS);
  return sqlite.transaction((rows: readonly AuditRecord[]) => {
    audit(rows.map(auditRowOf));
    disclosures(disclosuresOf(rows));
  });
}

function groupedInsert<Row extends object>(
  sqlite: SQLite.Database,
  table: string,
  columns: readonly string[],
): (rows: readonly Row[]) => void {
  const tuple = `(${columns.map(() => '?').join(', ')})`;
  const insert = (count: number) =>
    sqlite.prepare(
      `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${Array(count).fill(tuple).join(', ')}`,
    );
  const one = insert(1);
  const group = insert(GROUP);
  const valuesOf = (rows: readonly Row[], from: number, to: number) => {
    const values: unknown[] = [];
    for (let j = from; j < to; j++) {
      const row = rows[j] as Record<string, unknown>;
      for (const column of columns) values.push(row[column] ?? null);
    }
    return values;
  };
  return (rows) => {
    let i = 0;
    for (; i + GROUP <= rows.length; i += GROUP) group.run(valuesOf(rows, i, i + GROUP));
    for (; i < rows.length; i++) one.run(valuesOf(rows, i, i + 1));
  };
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

/**
 * Every audited answer that carried one patient's data, newest first, a page at a time, from the
 * (patient_id, at) index; an organization filter is applied in the same query.
 */
export async function* readDisclosures(db: Db, query: DisclosureQuery, pageSize = 1000) {
  let before: { at: number; requestId: string } | undefined;
  for (;;) {
    let q = db
      .selectFrom('audit_disclosures')
      .select(['at', 'request_id', 'organization_id', 'key_id', 'route'])
      .where('patient_id', '=', query.patientId);
    if (query.organizationId !== undefined) q = q.where('organization_id', '=', query.organizationId);
    if (query.sinceMs !== undefined) q = q.where('at', '>=', query.sinceMs);
    if (query.untilMs !== undefined) q = q.where('at', '<', query.untilMs);
    if (before !== undefined) {
      const cursor = before;
      q = q.where((eb) =>
        eb.or([
          eb('at', '<', cursor.at),
          eb.and([eb('at', '=', cursor.at), eb('request_id', '<', cursor.requestId)]),
        ]),
      );
    }
    const rows = await q.orderBy('at', 'desc').orderBy('request_id', 'desc').limit(pageSize).execute();
    for (const row of rows) yield row;
    if (rows.length < pageSize) return;
    const last = rows[rows.length - 1]!;
    before = { at: last.at, requestId: last.request_id };
  }
}

/**
 * Deletes audit records and disclosures older than `beforeMs`, at most `batchSize` rows per
 * statement (each its own transaction), so a large prune never holds a long lock. Returns the
 * number of rows deleted from each table.
 */
export async function pruneAudit(
  db: Db,
  beforeMs: number,
  batchSize = 5000,
): Promise<{ audit_log: number; audit_disclosures: number }> {
  const deleted = { audit_log: 0, audit_disclosures: 0 };
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
    const n = await deleteDisclosureBatch(db, beforeMs, batchSize);
    deleted.audit_disclosures += n;
    if (n < batchSize) break;
  }
  return deleted;
}

/** audit_disclosures has no key column: SQLite addresses rows by rowid, PostgreSQL by ctid. */
async function deleteDisclosureBatch(db: Db, beforeMs: number, batchSize: number): Promise<number> {
  const address = sqliteHandleOf(db) ? sql.raw('rowid') : sql.raw('ctid');
  const result = await sql`DELETE FROM audit_disclosures WHERE ${address} IN
    (SELECT ${address} FROM audit_disclosures WHERE at < ${beforeMs} LIMIT ${batchSize})`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

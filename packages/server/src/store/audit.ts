import type SQLite from 'better-sqlite3';
import type { Db, Store } from './database.js';
import type { AuditInsert } from './schema.js';

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

/**
 * Writes a batch of audit records in one transaction. On SQLite two insert shapes are prepared
 * once, a group of rows and a single row: SQL text that changed with every batch size would be
 * prepared afresh each time, which cost more than the inserts themselves under load, and a row
 * at a time paid a statement step per request. PostgreSQL takes multi-row inserts, which save
 * round trips.
 */
export async function insertAuditRecords(
  store: Pick<Store, 'db' | 'sqlite'>,
  rows: AuditInsert[],
): Promise<void> {
  if (rows.length === 0) return;
  // A Kysely transaction open on the shared connection (awaiting between statements) would
  // absorb these rows into its fate; then wait for the connection through Kysely instead.
  if (store.sqlite && !store.sqlite.inTransaction) {
    sqliteAuditWriter(store.sqlite)(rows);
    return;
  }
  // An explicit NULL would override the column default: a row stands for one request unless told.
  await insertThroughKysely(
    store.db,
    rows.map((row) => ({ ...row, request_count: row.request_count ?? 1 })),
  );
}

async function insertThroughKysely(db: Db, rows: AuditInsert[]): Promise<void> {
  await db.transaction().execute(async (tx) => {
    for (let i = 0; i < rows.length; i += 400) {
      await tx
        .insertInto('audit_log')
        .values(rows.slice(i, i + 400))
        .execute();
    }
  });
}

const sqliteWriters = new WeakMap<SQLite.Database, (rows: AuditInsert[]) => void>();

/** Rows per multi-row insert: one statement step per group instead of per row. */
const GROUP = 32;

function auditValues(row: AuditInsert, into: unknown[]): void {
  for (const column of AUDIT_COLUMNS) {
    into.push(column === 'request_count' ? (row.request_count ?? 1) : (row[column] ?? null));
  }
}

function sqliteAuditWriter(sqlite: SQLite.Database): (rows: AuditInsert[]) => void {
  let writer = sqliteWriters.get(sqlite);
  if (!writer) {
    const tuple = `(${AUDIT_COLUMNS.map(() => '?').join(', ')})`;
    const insert = (count: number) =>
      sqlite.prepare(
        `INSERT INTO audit_log (${AUDIT_COLUMNS.join(', ')}) VALUES ${Array(count).fill(tuple).join(', ')}`,
      );
    // Two fixed shapes, prepared once: groups of GROUP rows, then single rows for the rest.
    const one = insert(1);
    const group = insert(GROUP);
    writer = sqlite.transaction((rows: AuditInsert[]) => {
      let i = 0;
      for (; i + GROUP <= rows.length; i += GROUP) {
        const values: unknown[] = [];
        for (let j = i; j < i + GROUP; j++) auditValues(rows[j]!, values);
        group.run(values);
      }
      for (; i < rows.length; i++) {
        const values: unknown[] = [];
        auditValues(rows[i]!, values);
        one.run(values);
      }
    });
    sqliteWriters.set(sqlite, writer);
  }
  return writer;
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

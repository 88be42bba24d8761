/**
 * Audit groups written through better-sqlite3 directly. The audit writer thread loads this and
 * nothing of the query builder or the connection layer: each module a thread loads stays in its
 * heap for the life of the process.
 */
import type SQLite from 'better-sqlite3';
import type { AuditInsert } from '../database/schema.js';
import { AUDIT_COLUMNS, type AuditRecord, auditRowsOf } from './auditRows.js';
import { patientSetsOf, SET_LAST_USED_STEP_MS } from './patientSets.js';
import { patientTokensOf } from './patientTokens.js';

/** Rows per multi-row insert: one statement step per group instead of per row. */
const GROUP = 32;

/**
 * A writer of audit groups on a better-sqlite3 connection of its own (the audit writer thread's).
 * Two insert shapes per table are prepared once, a group of rows and a single row: SQL text that
 * changed with every group size would be prepared afresh each time, which cost more than the
 * inserts themselves under load, and a row at a time paid a statement step per request.
 *
 * The transaction is IMMEDIATE: it reads whether each set is stored before writing, and another
 * process's prune must not delete a set between that read and this group's records naming it.
 */
export function sqliteAuditWriter(sqlite: SQLite.Database): (rows: readonly AuditRecord[]) => void {
  const audit = groupedInsert<AuditInsert>(sqlite, 'audit_log', AUDIT_COLUMNS);
  const lastUsed = sqlite.prepare('SELECT last_used_at FROM audit_patient_sets WHERE set_id = ?').pluck();
  const insertSet = sqlite.prepare(
    'INSERT INTO audit_patient_sets (set_id, members, last_used_at) VALUES (?, ?, ?)',
  );
  const insertTokens = sqlite.prepare('INSERT INTO audit_set_tokens (rowid, tokens) VALUES (?, ?)');
  const touchSet = sqlite.prepare('UPDATE audit_patient_sets SET last_used_at = ? WHERE set_id = ?');
  const write = sqlite.transaction((records: readonly AuditRecord[]) => {
    const { setIds, sets } = patientSetsOf(records);
    for (const [id, set] of sets) {
      const stored = lastUsed.get(id) as number | undefined;
      if (stored === undefined) {
        // Its members go to the per-patient index as one appended row, not a row per patient.
        const { lastInsertRowid } = insertSet.run(id, set.membersJson, set.lastUsedAt);
        insertTokens.run(lastInsertRowid, patientTokensOf(set.members));
      } else if (stored < set.lastUsedAt - SET_LAST_USED_STEP_MS) touchSet.run(set.lastUsedAt, id);
    }
    audit(auditRowsOf(records, setIds));
  });
  return (records) => write.immediate(records);
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

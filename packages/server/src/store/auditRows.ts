/**
 * An audit record and the row it becomes: what the request thread hands over and both stores'
 * writers insert. Imports nothing that runs, so the SQLite writer thread can load it without the
 * query builder.
 */
import type { AuditInsert } from '../database/schema.js';

export const AUDIT_COLUMNS = [
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
  'patient_set',
] as const satisfies readonly (keyof AuditInsert)[];

/** A record's own fields: what a folded record holds. */
export type AuditFields = Omit<AuditInsert, 'patient_set'>;
/** An audit record and the patients whose data its answer carried (none for refusals). */
export type AuditRecord = AuditFields & { patient_ids?: readonly string[] | undefined };

export function auditRowsOf(
  records: readonly AuditRecord[],
  setIds: readonly (string | null)[],
): AuditInsert[] {
  return records.map(({ patient_ids: _, ...row }, i) => ({
    ...row,
    // An explicit NULL would override the column default: a row stands for one request unless told.
    request_count: row.request_count ?? 1,
    patient_set: setIds[i] ?? null,
  }));
}

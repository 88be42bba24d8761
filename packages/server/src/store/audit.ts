import type { Db } from './database.js';
import type { AuditInsert } from './schema.js';

export async function insertAuditRecords(db: Db, rows: AuditInsert[]): Promise<void> {
  if (rows.length === 0) return;
  await db.transaction().execute(async (tx) => {
    for (let i = 0; i < rows.length; i += 400) {
      await tx
        .insertInto('audit_log')
        .values(rows.slice(i, i + 400))
        .execute();
    }
  });
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

/** Audit records for the audit writer's tests, and a real store trigger that refuses one of them. */
import { sql } from 'kysely';
import type { Store } from '../../src/database/connection.js';
import type { AuditInsert } from '../../src/database/schema.js';

export function record(i: number): AuditInsert {
  return {
    at: 1_800_000_000_000 + i,
    request_id: `req_${String(i).padStart(22, '0')}`,
    organization_id: 'org_x',
    key_id: 'key_x',
    method: 'GET',
    route: 'getEncounter',
    encounter_id: null,
    document_id: null,
    status: 200,
    reason_code: null,
    duration_ms: 1.25,
  };
}

/** A real trigger in the store that aborts the insert of one request's record. */
export async function refuseRequestId(store: Store, requestId: string): Promise<void> {
  if (store.dialect === 'sqlite') {
    await sql`CREATE TRIGGER refuse_one BEFORE INSERT ON audit_log WHEN NEW.request_id = ${sql.lit(requestId)}
      BEGIN SELECT RAISE(ABORT, 'refused'); END`.execute(store.db);
    return;
  }
  await sql`CREATE FUNCTION refuse_one() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.request_id = ${sql.lit(requestId)} THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$`.execute(
    store.db,
  );
  await sql`CREATE TRIGGER refuse_one BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION refuse_one()`.execute(
    store.db,
  );
}

export async function allowAll(store: Store): Promise<void> {
  if (store.dialect === 'sqlite') await sql`DROP TRIGGER refuse_one`.execute(store.db);
  else await sql`DROP TRIGGER refuse_one ON audit_log`.execute(store.db);
}

import { type Kysely, sql } from 'kysely';
import { atomically, isSqlite } from './dialect.js';

/**
 * Disclosures by patient set instead of one row per patient per answer. A list page carried 50
 * patients, and its 50 disclosure rows (each an insert into a table and two indexes) cost the
 * audit writer as much as the page cost to serve. Yet the API is read-only and its data changes
 * only by import, so a sync job that reads the same pages again discloses the same sets again.
 *
 * - `audit_patient_sets`: one row per distinct set of patients, named by a digest of its members
 *   (see store/patientSets.ts), with its members as a JSON array (retention deletes their index
 *   rows by key; an index by set would be one more random insert per member) and the last time
 *   a record used it (retention looks only at sets unused since before its cut, and deletes one
 *   only when no record names it).
 * - `audit_set_patients`: the members, keyed by patient first: `eds audit --patient` reads the
 *   patient's sets from this key and their records from `audit_log (patient_set, at, request_id)`,
 *   newest first.
 * - `audit_log.patient_set`: the set the record's answer carried (NULL: none).
 *
 * A repeated page now costs one audit row and one set lookup; a new page costs its member rows
 * once. Existing disclosures move into one set per request (`r:` and the request ID: no digest
 * can be computed in SQL on SQLite, and a set of its own per record is always correct).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await atomically(db, upSteps);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await atomically(db, downSteps);
}

async function upSteps(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('audit_patient_sets')
    .addColumn('set_id', 'text', (c) => c.primaryKey())
    .addColumn('members', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('audit_patient_sets_last_used')
    .on('audit_patient_sets')
    .column('last_used_at')
    .execute();

  let members = db.schema
    .createTable('audit_set_patients')
    .addColumn('patient_id', 'text', (c) => c.notNull())
    .addColumn('set_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('audit_set_patients_key', ['patient_id', 'set_id']);
  if (isSqlite(db)) members = members.modifyEnd(sql`without rowid`);
  await members.execute();

  await db.schema.alterTable('audit_log').addColumn('patient_set', 'text').execute();
  await db.schema
    .createIndex('audit_log_patient_set')
    .on('audit_log')
    .columns(['patient_set', 'at', 'request_id'])
    .where(sql.ref('patient_set'), 'is not', null)
    .execute();

  const membersOf = isSqlite(db) ? sql`json_group_array(patient_id)` : sql`json_agg(patient_id)::text`;
  await sql`INSERT INTO audit_patient_sets (set_id, members, last_used_at)
    SELECT set_id, ${membersOf}, MAX(at) FROM (
      SELECT 'r:' || request_id AS set_id, patient_id, MAX(at) AS at FROM audit_disclosures
      GROUP BY request_id, patient_id
    ) AS disclosed GROUP BY set_id`.execute(db);
  await sql`INSERT INTO audit_set_patients (patient_id, set_id)
    SELECT DISTINCT patient_id, 'r:' || request_id FROM audit_disclosures`.execute(db);
  await sql`UPDATE audit_log SET patient_set = 'r:' || request_id
    WHERE request_id IN (SELECT request_id FROM audit_disclosures)`.execute(db);
  await db.schema.dropTable('audit_disclosures').execute();
}

/** 006's table and indexes, as 006 made them. */
async function createAuditDisclosures(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE audit_disclosures (
    patient_id text NOT NULL,
    at bigint NOT NULL,
    request_id text NOT NULL,
    organization_id text,
    key_id text,
    route text NOT NULL
  )`.execute(db);
  await sql`CREATE INDEX audit_disclosures_patient_at ON audit_disclosures (patient_id, at)`.execute(db);
  await sql`CREATE INDEX audit_disclosures_at ON audit_disclosures (at)`.execute(db);
}

async function downSteps(db: Kysely<unknown>): Promise<void> {
  await createAuditDisclosures(db);
  await sql`INSERT INTO audit_disclosures (patient_id, at, request_id, organization_id, key_id, route)
    SELECT sp.patient_id, a.at, a.request_id, a.organization_id, a.key_id, a.route
    FROM audit_log a JOIN audit_set_patients sp ON sp.set_id = a.patient_set`.execute(db);
  await db.schema.dropIndex('audit_log_patient_set').execute();
  await db.schema.alterTable('audit_log').dropColumn('patient_set').execute();
  await db.schema.dropTable('audit_set_patients').execute();
  await db.schema.dropTable('audit_patient_sets').execute();
}

import type { Kysely } from 'kysely';

/**
 * Which patients each audited answer carried (decisions.md, Audit): one row per patient per
 * request, beside its audit record, so "who saw this patient's data, when" is answered from the
 * (patient_id, at) index. The organization, key and route are repeated here so the report reads
 * one table; `at` has its own index so retention (`eds audit prune`) deletes in bounded batches.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('audit_disclosures')
    .addColumn('patient_id', 'text', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('organization_id', 'text')
    .addColumn('key_id', 'text')
    .addColumn('route', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('audit_disclosures_patient_at')
    .on('audit_disclosures')
    .columns(['patient_id', 'at'])
    .execute();
  await db.schema.createIndex('audit_disclosures_at').on('audit_disclosures').columns(['at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('audit_disclosures').execute();
}

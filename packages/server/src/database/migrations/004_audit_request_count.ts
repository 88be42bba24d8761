import type { Kysely } from 'kysely';

/**
 * Requests refused before any key is identified (a malformed or unknown token) are audited as
 * one row per route, status and reason per flush window, with the number of requests it stands
 * for: junk sent at line rate cannot grow the audit log at line rate. Every other row is one
 * request (request_count 1).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('audit_log')
    .addColumn('request_count', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('audit_log').dropColumn('request_count').execute();
}

import type { Kysely } from 'kysely';

/**
 * A counter per kind of change (authentication data, webhook delivery work) that SQLite writers
 * advance inside the transaction making the change, for other processes to poll. PostgreSQL's
 * writers NOTIFY instead and leave it empty.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('change_signals')
    .addColumn('channel', 'text', (c) => c.primaryKey())
    .addColumn('version', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('change_signals').execute();
}

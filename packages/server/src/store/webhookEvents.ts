import type { Insertable, Kysely } from 'kysely';
import type { Database, WebhookEventsTable } from '../database/schema.js';

export async function insertWebhookEvents(
  tx: Kysely<Database>,
  rows: Insertable<WebhookEventsTable>[],
): Promise<void> {
  for (let i = 0; i < rows.length; i += 400) {
    await tx
      .insertInto('webhook_events')
      .values(rows.slice(i, i + 400))
      .execute();
  }
}

export async function listWebhookEvents(db: Kysely<Database>, organizationId: string) {
  return db
    .selectFrom('webhook_events')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

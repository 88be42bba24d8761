import type { Kysely } from 'kysely';

/**
 * Endpoints in trouble (decisions.md, Webhook endpoints in trouble): since when every attempt to
 * a subscription's receiver has failed (NULL after a success), and when and why delivery to it
 * was paused (NULL while it is not). Deliveries of a paused subscription wait, unattempted.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const ms = 'bigint' as const;
  await db.schema.alterTable('webhook_subscriptions').addColumn('failing_since', ms).execute();
  await db.schema.alterTable('webhook_subscriptions').addColumn('paused_at', ms).execute();
  await db.schema.alterTable('webhook_subscriptions').addColumn('pause_reason', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['pause_reason', 'paused_at', 'failing_since']) {
    await db.schema.alterTable('webhook_subscriptions').dropColumn(column).execute();
  }
}

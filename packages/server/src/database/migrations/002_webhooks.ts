import type { Kysely } from 'kysely';

/**
 * Webhook subscriptions, their activations (readiness and provenance records), deliveries and
 * attempts. Times are epoch milliseconds like every other table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const ms = 'bigint' as const;

  await db.schema
    .createTable('webhook_subscriptions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('secret_ciphertext', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('revision', 'integer', (c) => c.notNull())
    .addColumn('active_revision', 'integer')
    .addColumn('activation_id', 'text')
    .addColumn('correlation_status', 'text', (c) => c.notNull())
    .addColumn('correlation_updated_at', ms, (c) => c.notNull())
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('updated_at', ms, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_subscriptions_org')
    .on('webhook_subscriptions')
    .columns(['organization_id'])
    .execute();

  await db.schema
    .createTable('webhook_activations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('subscription_id', 'text', (c) => c.notNull().references('webhook_subscriptions.id'))
    .addColumn('revision', 'integer', (c) => c.notNull())
    .addColumn('approved_routes', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('readiness', 'text', (c) => c.notNull())
    .addColumn('activated_by', 'text', (c) => c.notNull())
    .addColumn('reference', 'text', (c) => c.notNull())
    .addColumn('activated_at', ms, (c) => c.notNull())
    .addColumn('api_key_id', 'text', (c) => c.notNull())
    .addColumn('revoked_at', ms)
    .execute();
  await db.schema
    .createIndex('webhook_activations_subscription')
    .on('webhook_activations')
    .columns(['subscription_id', 'activated_at'])
    .execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('event_id', 'text', (c) => c.notNull().references('webhook_events.id'))
    .addColumn('subscription_id', 'text', (c) => c.notNull().references('webhook_subscriptions.id'))
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('due_at', ms, (c) => c.notNull())
    .addColumn('attempt_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('round_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_token', 'text')
    .addColumn('lease_expires_at', ms)
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('updated_at', ms, (c) => c.notNull())
    .addColumn('completed_at', ms)
    // One delivery per event and endpoint: its id is the stable Delivery-Id across retries.
    .addUniqueConstraint('webhook_deliveries_event_subscription', ['event_id', 'subscription_id'])
    .execute();
  // The claim scans due, non-terminal work in due order.
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .columns(['status', 'due_at'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_subscription')
    .on('webhook_deliveries')
    .columns(['subscription_id', 'status'])
    .execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('delivery_id', 'text', (c) => c.notNull().references('webhook_deliveries.id'))
    .addColumn('attempt_number', 'integer', (c) => c.notNull())
    .addColumn('started_at', ms, (c) => c.notNull())
    .addColumn('duration_ms', 'double precision', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error_class', 'text')
    .addColumn('outcome', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_attempts_delivery')
    .on('webhook_attempts')
    .columns(['delivery_id', 'attempt_number'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('002_webhooks cannot be reverted; restore from a backup instead');
}

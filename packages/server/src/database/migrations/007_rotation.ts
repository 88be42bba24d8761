import type { Kysely } from 'kysely';

/**
 * Rotation without gaps (decisions.md, Rotation):
 * - api_keys: a rolled key names its successor (and the successor its predecessor); the grace
 *   deadline is the rolled key's `expires_at`. `digest_secret_id` is a fingerprint of the digest
 *   secret that made `digest`, so the operator can see how many keys still depend on the
 *   previous secret (NULL: made before this migration, not yet seen in use since).
 * - webhook_subscriptions: during a signing-secret grace the former secret (encrypted like the
 *   current one) keeps signing until `secret_switch_at`.
 * - webhook_secret_rotations: who rotated a subscription's secret, when, and the switch time,
 *   beside its activations (provenance).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const ms = 'bigint' as const;
  await db.schema.alterTable('api_keys').addColumn('successor_id', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('predecessor_id', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('digest_secret_id', 'text').execute();

  await db.schema
    .alterTable('webhook_subscriptions')
    .addColumn('previous_secret_ciphertext', 'text')
    .execute();
  await db.schema.alterTable('webhook_subscriptions').addColumn('secret_switch_at', ms).execute();

  await db.schema
    .createTable('webhook_secret_rotations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('subscription_id', 'text', (c) => c.notNull().references('webhook_subscriptions.id'))
    .addColumn('rotated_by', 'text', (c) => c.notNull())
    .addColumn('rotated_at', ms, (c) => c.notNull())
    .addColumn('grace_seconds', 'integer', (c) => c.notNull())
    .addColumn('switch_at', ms, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_secret_rotations_subscription')
    .on('webhook_secret_rotations')
    .columns(['subscription_id', 'rotated_at'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('007_rotation cannot be reverted; restore from a backup instead');
}

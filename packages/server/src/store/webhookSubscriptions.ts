/** Webhook subscriptions and their activation records. */
import type { ExpressionBuilder, Insertable, Kysely, Updateable } from 'kysely';
import type {
  Database,
  WebhookActivationRow,
  WebhookActivationsTable,
  WebhookSecretRotationRow,
  WebhookSecretRotationsTable,
  WebhookSubscriptionRow,
  WebhookSubscriptionsTable,
} from '../database/schema.js';

type Tx = Kysely<Database>;

/**
 * The subscription gates the store can see: enabled, activated at its current revision, and
 * correlation confirmed. (The deployment switch is configuration, checked by the callers.)
 */
export function subscriptionEligible(eb: ExpressionBuilder<Database, 'webhook_subscriptions'>) {
  return eb.and([
    eb('webhook_subscriptions.enabled', '=', 1),
    eb('webhook_subscriptions.active_revision', '=', eb.ref('webhook_subscriptions.revision')),
    eb('webhook_subscriptions.correlation_status', '=', 'confirmed'),
  ]);
}

export function isSubscriptionEligible(row: WebhookSubscriptionRow): boolean {
  return row.enabled === 1 && row.active_revision === row.revision && row.correlation_status === 'confirmed';
}

/**
 * Eligible and not paused: whose deliveries may be attempted now. (A paused subscription still
 * gets deliveries for new events; they wait.)
 */
export function subscriptionSending(eb: ExpressionBuilder<Database, 'webhook_subscriptions'>) {
  return eb.and([subscriptionEligible(eb), eb('webhook_subscriptions.paused_at', 'is', null)]);
}

export function isSubscriptionSending(row: WebhookSubscriptionRow): boolean {
  return isSubscriptionEligible(row) && row.paused_at === null;
}

export async function insertSubscription(db: Tx, row: Insertable<WebhookSubscriptionsTable>): Promise<void> {
  await db.insertInto('webhook_subscriptions').values(row).execute();
}

export async function getSubscription(db: Tx, id: string): Promise<WebhookSubscriptionRow | undefined> {
  return db.selectFrom('webhook_subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listSubscriptions(db: Tx, organizationId?: string): Promise<WebhookSubscriptionRow[]> {
  let q = db.selectFrom('webhook_subscriptions').selectAll();
  if (organizationId !== undefined) q = q.where('organization_id', '=', organizationId);
  return q.orderBy('created_at').orderBy('id').execute();
}

export async function updateSubscription(
  db: Tx,
  id: string,
  set: Updateable<WebhookSubscriptionsTable>,
): Promise<void> {
  await db.updateTable('webhook_subscriptions').set(set).where('id', '=', id).execute();
}

/** Subscriptions of these organizations that may receive an event written now. */
export async function eligibleSubscriptions(
  db: Tx,
  organizationIds: readonly string[],
): Promise<{ id: string; organization_id: string }[]> {
  if (organizationIds.length === 0) return [];
  return db
    .selectFrom('webhook_subscriptions')
    .select(['id', 'organization_id'])
    .where('organization_id', 'in', [...organizationIds])
    .where((eb) => subscriptionEligible(eb))
    .orderBy('id')
    .execute();
}

export async function insertActivation(db: Tx, row: Insertable<WebhookActivationsTable>): Promise<void> {
  await db.insertInto('webhook_activations').values(row).execute();
}

export async function getActivation(db: Tx, id: string): Promise<WebhookActivationRow | undefined> {
  return db.selectFrom('webhook_activations').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function markActivationRevoked(db: Tx, id: string, now: number): Promise<void> {
  await db
    .updateTable('webhook_activations')
    .set({ revoked_at: now })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .execute();
}

/**
 * Replaces the signing secret only if it is still the one `row` holds, so two rotations at once
 * cannot both take effect (the later one sees no row and changes nothing).
 */
export async function replaceSigningSecret(
  db: Tx,
  row: WebhookSubscriptionRow,
  set: Pick<
    Updateable<WebhookSubscriptionsTable>,
    'secret_ciphertext' | 'previous_secret_ciphertext' | 'secret_switch_at' | 'updated_at'
  >,
): Promise<boolean> {
  const result = await db
    .updateTable('webhook_subscriptions')
    .set(set)
    .where('id', '=', row.id)
    .where('secret_ciphertext', '=', row.secret_ciphertext)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function insertSecretRotation(
  db: Tx,
  row: Insertable<WebhookSecretRotationsTable>,
): Promise<void> {
  await db.insertInto('webhook_secret_rotations').values(row).execute();
}

export async function listSecretRotations(
  db: Tx,
  subscriptionId: string,
): Promise<WebhookSecretRotationRow[]> {
  return db
    .selectFrom('webhook_secret_rotations')
    .selectAll()
    .where('subscription_id', '=', subscriptionId)
    .orderBy('rotated_at')
    .orderBy('id')
    .execute();
}

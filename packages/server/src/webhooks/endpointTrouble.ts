/**
 * The operator's side of endpoints in trouble (decisions.md): resuming a paused endpoint, and the
 * deliveries whose attempts are exhausted (or ended on a terminal answer), which wait for an
 * operator to redeliver them. Views carry ids, times, codes and classes only.
 */
import { OperatorError } from '../domain/errors.js';
import { failedDeliveries } from '../store/webhookDeliveries.js';
import { resumeEndpoint } from '../store/webhookEndpointHealth.js';
import { getSubscription } from '../store/webhookSubscriptions.js';
import { toIso } from '../time.js';
import type { WebhookAdmin } from './subscriptions.js';
import { announceDeliveryWork } from './wake.js';

/** Sends what waited while the endpoint was paused, oldest event first. */
export async function resumeSubscription(admin: WebhookAdmin, id: string) {
  return admin.store.db.transaction().execute(async (tx) => {
    const sub = await getSubscription(tx, id);
    if (!sub) throw new OperatorError(`webhook subscription ${id} does not exist`);
    const waiting = await resumeEndpoint(tx, id);
    if (waiting === undefined) throw new OperatorError(`webhook subscription ${id} is not paused`);
    await announceDeliveryWork(tx);
    return {
      subscription_id: id,
      paused: false,
      was_paused_since: toIso(sub.paused_at as number),
      pause_reason: sub.pause_reason,
      resumed_at: toIso(admin.clock()),
      waiting_deliveries: waiting,
    };
  });
}

export async function listFailures(
  admin: WebhookAdmin,
  input: { organizationId?: string | undefined; sinceMs?: number | undefined; limit?: number | undefined },
) {
  const rows = await failedDeliveries(admin.store.db, { ...input, limit: input.limit ?? 1000 });
  return {
    failures: rows.map((r) => ({
      delivery_id: r.id,
      event_id: r.event_id,
      subscription_id: r.subscription_id,
      organization_id: r.organization_id,
      event_created_at: toIso(r.event_created_at),
      failed_at: r.completed_at === null ? null : toIso(r.completed_at),
      attempt_count: r.attempt_count,
      last_status_code: r.last_status_code,
      last_error: r.last_error,
    })),
  };
}

/**
 * Operator views and re-queueing of deliveries. Re-queueing reuses the delivery row, so a
 * receiver sees the same Delivery-Id (and the same event id and body bytes) again; it starts a
 * new retry round. The contract makes 4xx terminal, so after a receiver's outage or
 * misconfiguration `recover` is how the failed work goes out again.
 */

import type { DeliveryStatus, WebhookAttemptRow, WebhookDeliveryRow } from '../database/schema.js';
import { OperatorError } from '../domain/errors.js';
import {
  deliveriesOfEvent,
  failedDeliveryIds,
  insertDeliveries,
  listDeliveries,
  requeueDeliveries,
} from '../store/webhookDeliveries.js';
import {
  eligibleSubscriptions,
  getSubscription,
  isSubscriptionEligible,
} from '../store/webhookSubscriptions.js';
import { toIso } from '../time.js';
import { newDelivery } from './events.js';
import type { WebhookAdmin } from './subscriptions.js';
import { announceDeliveryWork } from './wake.js';

const iso = (ms: number | null) => (ms === null ? null : toIso(ms));

/** What an operator sees: codes, times and classes; never bodies, headers, URLs or secrets. */
function describeDelivery(d: WebhookDeliveryRow, attempts: WebhookAttemptRow[]) {
  return {
    delivery_id: d.id,
    event_id: d.event_id,
    subscription_id: d.subscription_id,
    organization_id: d.organization_id,
    status: d.status,
    attempt_count: d.attempt_count,
    next_attempt_at: d.status === 'pending' ? iso(d.due_at) : null,
    lease_expires_at: d.status === 'sending' ? iso(d.lease_expires_at) : null,
    last_status_code: d.last_status_code,
    last_error: d.last_error,
    created_at: iso(d.created_at),
    updated_at: iso(d.updated_at),
    completed_at: iso(d.completed_at),
    attempts: attempts.map((a) => ({
      attempt: a.attempt_number,
      started_at: iso(a.started_at),
      duration_ms: a.duration_ms,
      status_code: a.status_code,
      error: a.error_class,
      outcome: a.outcome,
    })),
  };
}

export interface DeliveryListInput {
  subscriptionId?: string | undefined;
  organizationId?: string | undefined;
  sinceMs?: number | undefined;
  eventId?: string | undefined;
  status?: DeliveryStatus | undefined;
  limit?: number | undefined;
}

export async function listDeliveryViews(admin: WebhookAdmin, input: DeliveryListInput) {
  const rows = await listDeliveries(admin.store.db, { ...input, limit: input.limit ?? 100 });
  return { deliveries: rows.map((r) => describeDelivery(r.delivery, r.attempts)) };
}

export type DeliveryView = ReturnType<typeof describeDelivery>;

/** The columns of the CSV report: one row per attempt (a delivery not yet attempted: one row). */
export const DELIVERY_REPORT_COLUMNS = [
  'organization_id',
  'subscription_id',
  'event_id',
  'delivery_id',
  'created_at',
  'status',
  'attempt',
  'attempt_started_at',
  'duration_ms',
  'status_code',
  'error',
  'outcome',
] as const;

export function deliveryReportRows(view: DeliveryView): (string | number | null)[][] {
  const head = [
    view.organization_id,
    view.subscription_id,
    view.event_id,
    view.delivery_id,
    view.created_at,
    view.status,
  ];
  if (view.attempts.length === 0) return [[...head, null, null, null, null, null, null]];
  return view.attempts.map((a) => [
    ...head,
    a.attempt,
    a.started_at,
    a.duration_ms,
    a.status_code,
    a.error,
    a.outcome,
  ]);
}

function requireSwitchOn(admin: WebhookAdmin): void {
  if (!admin.config.webhooks.enabled) {
    throw new OperatorError(
      'webhook delivery is off in this deployment (EDS_WEBHOOKS_ENABLED=true turns it on)',
    );
  }
}

/**
 * Sends an event again to the organization's eligible subscriptions (or the one named): a
 * finished delivery is re-queued under its Delivery-Id, an open one is left alone, and a
 * subscription that became eligible after the event gets a new delivery.
 */
export async function redeliverEvent(admin: WebhookAdmin, eventId: string, subscriptionId?: string) {
  requireSwitchOn(admin);
  return admin.store.db.transaction().execute(async (tx) => {
    const event = await tx
      .selectFrom('webhook_events')
      .select(['id', 'organization_id'])
      .where('id', '=', eventId)
      .executeTakeFirst();
    if (!event) throw new OperatorError(`webhook event ${eventId} does not exist`);
    let targets = await eligibleSubscriptions(tx, [event.organization_id]);
    if (subscriptionId !== undefined) {
      const sub = await getSubscription(tx, subscriptionId);
      if (!sub || sub.organization_id !== event.organization_id) {
        throw new OperatorError(
          `webhook subscription ${subscriptionId} does not belong to the event's organization`,
        );
      }
      if (!isSubscriptionEligible(sub)) {
        throw new OperatorError(
          `webhook subscription ${subscriptionId} is not eligible (enabled, activated at its revision, correlation confirmed)`,
        );
      }
      targets = targets.filter((t) => t.id === subscriptionId);
    }
    const existing = new Map((await deliveriesOfEvent(tx, eventId)).map((d) => [d.subscription_id, d]));
    const now = admin.clock();
    const results: { delivery_id: string; subscription_id: string; action: string }[] = [];
    const toRequeue: string[] = [];
    const toCreate = [];
    for (const target of targets) {
      const current = existing.get(target.id);
      if (!current) {
        const delivery = newDelivery(eventId, target.id, event.organization_id, now);
        toCreate.push(delivery);
        results.push({ delivery_id: delivery.id, subscription_id: target.id, action: 'created' });
      } else if (current.status === 'pending' || current.status === 'sending') {
        results.push({ delivery_id: current.id, subscription_id: target.id, action: 'already_open' });
      } else {
        toRequeue.push(current.id);
        results.push({ delivery_id: current.id, subscription_id: target.id, action: 'requeued' });
      }
    }
    await insertDeliveries(tx, toCreate);
    await requeueDeliveries(tx, toRequeue, now);
    if (toCreate.length + toRequeue.length > 0) await announceDeliveryWork(tx);
    return { event_id: eventId, deliveries: results };
  });
}

/** Re-queues the subscription's failed deliveries of events created in [since, until). */
export async function recoverDeliveries(
  admin: WebhookAdmin,
  input: { subscriptionId: string; sinceMs: number; untilMs?: number | undefined },
) {
  if (input.untilMs !== undefined && input.untilMs <= input.sinceMs) {
    throw new OperatorError('--until must be later than --since');
  }
  requireSwitchOn(admin);
  return admin.store.db.transaction().execute(async (tx) => {
    const sub = await getSubscription(tx, input.subscriptionId);
    if (!sub) throw new OperatorError(`webhook subscription ${input.subscriptionId} does not exist`);
    if (!isSubscriptionEligible(sub)) {
      throw new OperatorError(
        `webhook subscription ${input.subscriptionId} is not eligible (enabled, activated at its revision, correlation confirmed); nothing was re-queued`,
      );
    }
    const ids = await failedDeliveryIds(tx, input.subscriptionId, input.sinceMs, input.untilMs);
    const requeued = await requeueDeliveries(tx, ids, admin.clock());
    if (requeued > 0) await announceDeliveryWork(tx);
    return {
      subscription_id: input.subscriptionId,
      since: toIso(input.sinceMs),
      until: input.untilMs === undefined ? null : toIso(input.untilMs),
      requeued,
      delivery_ids: ids,
    };
  });
}

/**
 * The transactional outbox: a `recording.transcript_ready` event is written in the same
 * transaction as the finalization that causes it, together with one pending delivery per
 * subscription of the event's organization that is eligible at that moment (decisions.md:
 * deployment switch on, subscription enabled and activated at its current revision, correlation
 * confirmed). A subscription that becomes eligible later gets no earlier events unless an
 * operator redelivers or recovers them. The body is built here, once, and its bytes are what
 * every delivery attempt sends.
 */
import type { Kysely } from 'kysely';
import type { WebhookEventBody } from '../contract/schemas.js';
import { WEBHOOK_API_VERSION, WEBHOOK_EVENT_TYPE } from '../contract/webhook.js';
import type { Database, WebhookDeliveriesTable } from '../database/schema.js';
import { newId } from '../ids.js';
import { insertDeliveries } from '../store/webhookDeliveries.js';
import { insertWebhookEvents } from '../store/webhookEvents.js';
import { eligibleSubscriptions } from '../store/webhookSubscriptions.js';
import { toIso } from '../time.js';
import { announceDeliveryWork } from './wake.js';

export interface TranscriptReady {
  organizationId: string;
  encounterId: string;
  documentId: string;
}

export interface RecordEventsOptions {
  /**
   * The deployment's webhook settings (`services.config`). Required, so that no writer of
   * finalizations can forget them and silently create events without deliveries.
   */
  config: { readonly webhooks: { readonly enabled: boolean } };
}

/** Exactly the contract's keys, in the contract's order; nothing else can be added. */
export function buildEventBody(id: string, ready: TranscriptReady, occurredAt: number): WebhookEventBody {
  return {
    id,
    type: WEBHOOK_EVENT_TYPE,
    api_version: WEBHOOK_API_VERSION,
    occurred_at: toIso(occurredAt),
    organization_id: ready.organizationId,
    resources: { encounter_id: ready.encounterId, document_id: ready.documentId },
  };
}

/**
 * Writes one event per finalization, and the deliveries of eligible subscriptions, inside the
 * caller's transaction. Returns the event ids.
 */
export async function recordTranscriptsReady(
  tx: Kysely<Database>,
  finalized: readonly TranscriptReady[],
  now: number,
  options: RecordEventsOptions,
): Promise<string[]> {
  const rows = finalized.map((ready) => {
    const id = newId('evt');
    return {
      id,
      organization_id: ready.organizationId,
      type: WEBHOOK_EVENT_TYPE,
      api_version: WEBHOOK_API_VERSION,
      encounter_id: ready.encounterId,
      document_id: ready.documentId,
      occurred_at: now,
      body: JSON.stringify(buildEventBody(id, ready, now)),
      created_at: now,
    };
  });
  await insertWebhookEvents(tx, rows);
  if (rows.length > 0 && options.config?.webhooks.enabled === true) {
    await createDeliveries(tx, rows, now);
  }
  return rows.map((r) => r.id);
}

async function createDeliveries(
  tx: Kysely<Database>,
  events: readonly { id: string; organization_id: string }[],
  now: number,
): Promise<void> {
  const organizations = [...new Set(events.map((e) => e.organization_id))];
  const subscriptions = await eligibleSubscriptions(tx, organizations);
  if (subscriptions.length === 0) return;
  const byOrganization = new Map<string, string[]>();
  for (const s of subscriptions) {
    byOrganization.set(s.organization_id, [...(byOrganization.get(s.organization_id) ?? []), s.id]);
  }
  const deliveries: WebhookDeliveriesTable[] = [];
  for (const event of events) {
    for (const subscriptionId of byOrganization.get(event.organization_id) ?? []) {
      deliveries.push(newDelivery(event.id, subscriptionId, event.organization_id, now));
    }
  }
  if (deliveries.length === 0) return;
  await insertDeliveries(tx, deliveries);
  await announceDeliveryWork(tx);
}

/** A pending delivery, due now; its id is the Delivery-Id of every attempt. */
export function newDelivery(
  eventId: string,
  subscriptionId: string,
  organizationId: string,
  now: number,
): WebhookDeliveriesTable {
  return {
    id: newId('dlv'),
    event_id: eventId,
    subscription_id: subscriptionId,
    organization_id: organizationId,
    status: 'pending',
    due_at: now,
    attempt_count: 0,
    round_attempts: 0,
    lease_token: null,
    lease_expires_at: null,
    last_status_code: null,
    last_error: null,
    created_at: now,
    updated_at: now,
    completed_at: null,
  };
}

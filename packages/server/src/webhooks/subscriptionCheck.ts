/**
 * The send-time gate check, shared: deliveries to the same subscription that ask while a lookup
 * is in flight share its answer, so a burst of 64 attempts costs one query, not 64. Nothing is
 * cached beyond the lookup itself: every answer was read after the delivery asked for it.
 */
import type { Db } from '../database/connection.js';
import type { WebhookSubscriptionRow } from '../database/schema.js';
import { getSubscription } from '../store/webhookSubscriptions.js';

export class SubscriptionCheck {
  private readonly inFlight = new Map<string, Promise<WebhookSubscriptionRow | undefined>>();

  constructor(private readonly db: Db) {}

  current(id: string): Promise<WebhookSubscriptionRow | undefined> {
    let lookup = this.inFlight.get(id);
    if (!lookup) {
      lookup = getSubscription(this.db, id).finally(() => this.inFlight.delete(id));
      this.inFlight.set(id, lookup);
    }
    return lookup;
  }
}

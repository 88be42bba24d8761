/**
 * Endpoints in trouble (decisions.md): a subscription remembers since when every attempt to its
 * receiver has failed, and is paused once that has lasted the configured time. Pausing changes
 * no delivery: the claim skips a paused subscription's work, which waits, and new events still
 * create their deliveries. Resuming makes what waited due in the order of its events.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../database/schema.js';

type Tx = Kysely<Database>;

/** What one attempt says about its receiver. */
export interface ReceiverObservation {
  subscriptionId: string;
  /** The receiver answered 2xx (`ok`) or failed; attempts cut short by us are not observations. */
  verdict: 'ok' | 'failed';
  at: number;
  /** The failure, as the operator sees it (an HTTP status or an error class). */
  cause: string;
}

export interface PausedEndpoint {
  subscriptionId: string;
  failingSince: number;
  reason: string;
}

/**
 * Records attempts' verdicts in the completion's transaction and pauses the subscriptions whose
 * failures have lasted `pauseAfterMs`. Only one writer pauses a subscription (the update matches
 * on `paused_at IS NULL`), so the pause is logged and counted once.
 */
export async function recordReceiverHealth(
  tx: Tx,
  observations: readonly ReceiverObservation[],
  now: number,
  pauseAfterMs: number,
): Promise<PausedEndpoint[]> {
  const succeeded = new Set<string>();
  const failed = new Map<string, ReceiverObservation>();
  for (const o of observations) {
    if (o.verdict === 'ok') succeeded.add(o.subscriptionId);
    else if ((failed.get(o.subscriptionId)?.at ?? -1) <= o.at) failed.set(o.subscriptionId, o);
  }
  // A success in the same batch wins: the receiver is not down.
  for (const id of succeeded) failed.delete(id);
  if (succeeded.size > 0) {
    await tx
      .updateTable('webhook_subscriptions')
      .set({ failing_since: null })
      .where('id', 'in', [...succeeded])
      .where('failing_since', 'is not', null)
      .execute();
  }
  const paused: PausedEndpoint[] = [];
  for (const [id, last] of failed) {
    await tx
      .updateTable('webhook_subscriptions')
      .set({ failing_since: last.at })
      .where('id', '=', id)
      .where('failing_since', 'is', null)
      .execute();
    const row = await tx
      .updateTable('webhook_subscriptions')
      .set((eb) => ({
        paused_at: now,
        pause_reason: eb.val(`every attempt failed for the pause threshold; last: ${last.cause}`),
      }))
      .where('id', '=', id)
      .where('paused_at', 'is', null)
      .where('failing_since', '<=', now - pauseAfterMs)
      .returning(['failing_since', 'pause_reason'])
      .executeTakeFirst();
    if (row) {
      paused.push({
        subscriptionId: id,
        failingSince: Number(row.failing_since),
        reason: row.pause_reason ?? '',
      });
    }
  }
  return paused;
}

/**
 * Resumes a paused subscription: the failure window starts again, and the deliveries that waited
 * become due at their own creation time, so the claim (in due order) sends the oldest first; each
 * gets a fresh retry round. Returns how many wait, or undefined when it was not paused.
 */
export async function resumeEndpoint(tx: Tx, subscriptionId: string): Promise<number | undefined> {
  const resumed = await tx
    .updateTable('webhook_subscriptions')
    .set({ paused_at: null, pause_reason: null, failing_since: null })
    .where('id', '=', subscriptionId)
    .where('paused_at', 'is not', null)
    .executeTakeFirst();
  if (Number(resumed.numUpdatedRows) === 0) return undefined;
  const waiting = await tx
    .updateTable('webhook_deliveries')
    .set((eb) => ({ due_at: eb.ref('created_at'), round_attempts: 0 }))
    .where('subscription_id', '=', subscriptionId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(waiting.numUpdatedRows);
}

/** Paused subscriptions, for the metric. */
export async function countPausedEndpoints(db: Tx): Promise<number> {
  const row = await db
    .selectFrom('webhook_subscriptions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('paused_at', 'is not', null)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * Webhook deliveries and their attempts. A delivery is claimed under a lease fenced by a random
 * token: every later write of the claimer (completion, renewal, release) matches on the token
 * AND on status `sending`, so a worker whose lease expired, or whose delivery an operator
 * cancelled, cannot write over what happened since.
 */
import type { Insertable, Kysely } from 'kysely';
import { dialectOf } from '../database/dialect.js';
import type {
  AttemptOutcome,
  Database,
  DeliveryStatus,
  WebhookAttemptRow,
  WebhookDeliveriesTable,
  WebhookDeliveryRow,
} from '../database/schema.js';
import { newId } from '../ids.js';
import {
  type PausedEndpoint,
  type ReceiverObservation,
  recordReceiverHealth,
} from './webhookEndpointHealth.js';
import { subscriptionSending } from './webhookSubscriptions.js';

type Tx = Kysely<Database>;

const CHUNK = 400;
const NON_TERMINAL: DeliveryStatus[] = ['pending', 'sending'];

export async function insertDeliveries(tx: Tx, rows: Insertable<WebhookDeliveriesTable>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) {
    await tx
      .insertInto('webhook_deliveries')
      .values(rows.slice(i, i + CHUNK))
      .execute();
  }
}

/** A claimed delivery with what sending it needs. */
export interface ClaimedDelivery {
  id: string;
  eventId: string;
  subscriptionId: string;
  attemptNumber: number;
  roundAttempts: number;
  body: string;
  apiVersion: string;
  eventCreatedAt: number;
  url: string;
  secretCiphertext: string;
  revision: number;
}

export interface ClaimInput {
  now: number;
  leaseMs: number;
  token: string;
  limit: number;
}

/**
 * Claims up to `limit` due deliveries of eligible subscriptions: pending ones whose time has
 * come and sending ones whose lease has expired (their worker died). On PostgreSQL the
 * candidates are locked with FOR UPDATE SKIP LOCKED, so concurrent workers take disjoint sets;
 * SQLite has one writer, so the statement alone is atomic. This is the only dialect branch here.
 */
export async function claimDueDeliveries(db: Tx, input: ClaimInput): Promise<ClaimedDelivery[]> {
  const leaseUntil = input.now + input.leaseMs;
  const candidates = db
    .selectFrom('webhook_deliveries as d')
    .select('d.id')
    .where('d.status', 'in', NON_TERMINAL)
    .where('d.due_at', '<=', input.now)
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('webhook_subscriptions')
          .select('webhook_subscriptions.id')
          .whereRef('webhook_subscriptions.id', '=', 'd.subscription_id')
          .where((eb) => subscriptionSending(eb)),
      ),
    )
    .orderBy('d.due_at')
    .limit(input.limit)
    .$if(dialectOf(db) === 'postgres', (q) => q.forUpdate().skipLocked());

  // A materialized CTE, not `id IN (subquery)`: PostgreSQL may otherwise re-run the locking
  // subquery per row and claim more than `limit` rows (seen in practice).
  const claimed = await db
    .with(
      (cte) => cte('claimable').materialized(),
      () => candidates,
    )
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      status: 'sending',
      lease_token: input.token,
      lease_expires_at: leaseUntil,
      due_at: leaseUntil,
      attempt_count: eb('attempt_count', '+', 1),
      round_attempts: eb('round_attempts', '+', 1),
      updated_at: input.now,
    }))
    .where('id', 'in', (eb) => eb.selectFrom('claimable').select('claimable.id'))
    .where('status', 'in', NON_TERMINAL)
    .where('due_at', '<=', input.now)
    .returning(['id'])
    .execute();
  if (claimed.length === 0) return [];

  const rows = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .innerJoin('webhook_subscriptions as s', 's.id', 'd.subscription_id')
    .select([
      'd.id',
      'd.event_id',
      'd.subscription_id',
      'd.attempt_count',
      'd.round_attempts',
      'e.body',
      'e.api_version',
      'e.created_at as event_created_at',
      's.url',
      's.secret_ciphertext',
      's.revision',
    ])
    .where(
      'd.id',
      'in',
      claimed.map((c) => c.id),
    )
    .where('d.lease_token', '=', input.token)
    // Every claimed row now has the same due time (the lease's end): hand them out oldest first.
    .orderBy('d.created_at')
    .orderBy('d.id')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    eventId: r.event_id,
    subscriptionId: r.subscription_id,
    attemptNumber: r.attempt_count,
    roundAttempts: r.round_attempts,
    body: r.body,
    apiVersion: r.api_version,
    eventCreatedAt: r.event_created_at,
    url: r.url,
    secretCiphertext: r.secret_ciphertext,
    revision: r.revision,
  }));
}

/** The earliest due time among work that eligible subscriptions could claim; for the timer. */
export async function nextDueAt(db: Tx): Promise<number | undefined> {
  const row = await db
    .selectFrom('webhook_deliveries as d')
    .select((eb) => eb.fn.min('d.due_at').as('due'))
    .where('d.status', 'in', NON_TERMINAL)
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('webhook_subscriptions')
          .select('webhook_subscriptions.id')
          .whereRef('webhook_subscriptions.id', '=', 'd.subscription_id')
          .where((eb) => subscriptionSending(eb)),
      ),
    )
    .executeTakeFirst();
  return row?.due === null || row?.due === undefined ? undefined : Number(row.due);
}

export interface AttemptRecord {
  attemptNumber: number;
  startedAt: number;
  durationMs: number;
  statusCode: number | null;
  errorClass: string | null;
}

export interface CompletionInput {
  deliveryId: string;
  token: string;
  /** What the attempt says about the receiver; absent when the attempt was cut short by us. */
  receiver?: Omit<ReceiverObservation, 'at'> | undefined;
  now: number;
  /** What the attempt leads to, if the claim still holds. */
  next:
    | { status: 'succeeded' | 'failed'; outcome: 'succeeded' | 'failed' }
    | { status: 'pending'; outcome: 'retry'; dueAt: number };
  attempt: AttemptRecord;
}

/**
 * Records attempts and, where this worker still holds the claim, their effect on the delivery,
 * in one transaction (one commit for many completions), with what they say about the receivers
 * (endpoint health). Returns, in order, the outcome recorded for each: the intended one,
 * `cancelled` when an operator cancelled the delivery meanwhile, or `superseded` when the lease
 * was lost to another worker; and the subscriptions this paused.
 */
export async function completeAttempts(
  db: Tx,
  inputs: readonly CompletionInput[],
  pauseAfterMs: number,
): Promise<{ outcomes: AttemptOutcome[]; paused: PausedEndpoint[] }> {
  if (inputs.length === 0) return { outcomes: [], paused: [] };
  return db.transaction().execute(async (tx) => {
    // Completions with the same effect (most often: succeeded, 204) share one fenced statement.
    const groups = new Map<string, number[]>();
    for (const [i, input] of inputs.entries()) {
      const n = input.next;
      const key = JSON.stringify([
        n.status,
        n.status === 'pending' ? n.dueAt : null,
        input.attempt.statusCode,
        input.attempt.errorClass,
      ]);
      groups.set(key, [...(groups.get(key) ?? []), i]);
    }
    const applied = new Set<string>();
    for (const members of groups.values()) {
      const first = inputs[members[0]!]!;
      const now = Math.max(...members.map((i) => inputs[i]!.now));
      const terminal = first.next.status !== 'pending';
      for (let at = 0; at < members.length; at += CHUNK / 2) {
        const slice = members.slice(at, at + CHUNK / 2);
        const rows = await tx
          .updateTable('webhook_deliveries')
          .set({
            status: first.next.status,
            due_at: first.next.status === 'pending' ? first.next.dueAt : now,
            lease_token: null,
            lease_expires_at: null,
            last_status_code: first.attempt.statusCode,
            last_error: first.attempt.errorClass,
            updated_at: now,
            completed_at: terminal ? now : null,
          })
          .where((eb) =>
            eb(
              eb.refTuple('id', 'lease_token'),
              'in',
              slice.map((i) => eb.tuple(inputs[i]!.deliveryId, inputs[i]!.token)),
            ),
          )
          .where('status', '=', 'sending')
          .returning('id')
          .execute();
        for (const r of rows) applied.add(r.id);
      }
    }
    const outcomes: AttemptOutcome[] = inputs.map((input) => input.next.outcome);
    const lost = inputs.flatMap((input, i) => (applied.has(input.deliveryId) ? [] : [i]));
    if (lost.length > 0) {
      const rows = await tx
        .selectFrom('webhook_deliveries')
        .select(['id', 'status'])
        .where(
          'id',
          'in',
          lost.map((i) => inputs[i]!.deliveryId),
        )
        .execute();
      const status = new Map(rows.map((r) => [r.id, r.status]));
      for (const i of lost) {
        outcomes[i] = status.get(inputs[i]!.deliveryId) === 'cancelled' ? 'cancelled' : 'superseded';
      }
    }
    await insertAttempts(
      tx,
      inputs.map((input, i) => ({
        deliveryId: input.deliveryId,
        attempt: input.attempt,
        outcome: outcomes[i]!,
      })),
    );
    const observations = inputs.flatMap((input) =>
      input.receiver ? [{ ...input.receiver, at: input.attempt.startedAt }] : [],
    );
    const now = Math.max(...inputs.map((input) => input.now));
    const paused = await recordReceiverHealth(tx, observations, now, pauseAfterMs);
    return { outcomes, paused };
  });
}

async function insertAttempts(
  tx: Tx,
  rows: readonly { deliveryId: string; attempt: AttemptRecord; outcome: AttemptOutcome }[],
): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) {
    await tx
      .insertInto('webhook_attempts')
      .values(
        rows.slice(i, i + CHUNK).map(({ deliveryId, attempt: a, outcome }) => ({
          id: newId('att'),
          delivery_id: deliveryId,
          attempt_number: a.attemptNumber,
          started_at: a.startedAt,
          duration_ms: Math.round(a.durationMs * 1000) / 1000,
          status_code: a.statusCode,
          error_class: a.errorClass,
          outcome,
        })),
      )
      .execute();
  }
}

/** Extends the leases this worker still holds; returns the ids it still holds. */
export async function renewLeases(
  db: Tx,
  ids: readonly string[],
  token: string,
  now: number,
  leaseMs: number,
): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .updateTable('webhook_deliveries')
    .set({ lease_expires_at: now + leaseMs, due_at: now + leaseMs, updated_at: now })
    .where('id', 'in', [...ids])
    .where('lease_token', '=', token)
    .where('status', '=', 'sending')
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Gives back claims that were never attempted (shutdown, or the subscription stopped being
 * eligible before sending): pending again, due now, and the attempt counters undone.
 */
export async function releaseUnattempted(db: Tx, id: string, token: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      status: 'pending',
      lease_token: null,
      lease_expires_at: null,
      due_at: now,
      attempt_count: eb('attempt_count', '-', 1),
      round_attempts: eb('round_attempts', '-', 1),
      updated_at: now,
    }))
    .where('id', '=', id)
    .where('lease_token', '=', token)
    .where('status', '=', 'sending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Cancels every non-terminal delivery of a subscription: pending, sending, lease expired. */
export async function cancelOpenDeliveries(tx: Tx, subscriptionId: string, now: number): Promise<number> {
  const result = await tx
    .updateTable('webhook_deliveries')
    .set({
      status: 'cancelled',
      lease_token: null,
      lease_expires_at: null,
      last_error: 'cancelled_readiness_revoked',
      updated_at: now,
      completed_at: now,
    })
    .where('subscription_id', '=', subscriptionId)
    .where('status', 'in', NON_TERMINAL)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Puts finished deliveries back in the queue as a new retry round: same row, so the same
 * Delivery-Id; attempts keep their numbers. Deliveries still open are left as they are.
 */
export async function requeueDeliveries(tx: Tx, ids: readonly string[], now: number): Promise<number> {
  let count = 0;
  for (let i = 0; i < ids.length; i += CHUNK) {
    const result = await tx
      .updateTable('webhook_deliveries')
      .set({
        status: 'pending',
        due_at: now,
        round_attempts: 0,
        lease_token: null,
        lease_expires_at: null,
        updated_at: now,
        completed_at: null,
      })
      .where('id', 'in', ids.slice(i, i + CHUNK))
      .where('status', 'not in', NON_TERMINAL)
      .executeTakeFirst();
    count += Number(result.numUpdatedRows);
  }
  return count;
}

export async function deliveriesOfEvent(db: Tx, eventId: string): Promise<WebhookDeliveryRow[]> {
  return db.selectFrom('webhook_deliveries').selectAll().where('event_id', '=', eventId).execute();
}

/** Failed deliveries of a subscription whose event was created in [sinceMs, untilMs). */
export async function failedDeliveryIds(
  db: Tx,
  subscriptionId: string,
  sinceMs: number,
  untilMs: number | undefined,
): Promise<string[]> {
  let q = db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .select('d.id')
    .where('d.subscription_id', '=', subscriptionId)
    .where('d.status', '=', 'failed')
    .where('e.created_at', '>=', sinceMs);
  if (untilMs !== undefined) q = q.where('e.created_at', '<', untilMs);
  const rows = await q.orderBy('e.created_at').orderBy('d.id').execute();
  return rows.map((r) => r.id);
}

/** Failed deliveries, most recently failed first, optionally of one organization since a time. */
export async function failedDeliveries(
  db: Tx,
  query: { organizationId?: string | undefined; sinceMs?: number | undefined; limit: number },
) {
  let q = db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .select([
      'd.id',
      'd.event_id',
      'd.subscription_id',
      'd.organization_id',
      'd.attempt_count',
      'd.last_status_code',
      'd.last_error',
      'd.completed_at',
      'e.created_at as event_created_at',
    ])
    .where('d.status', '=', 'failed');
  if (query.organizationId !== undefined) q = q.where('d.organization_id', '=', query.organizationId);
  if (query.sinceMs !== undefined) q = q.where('d.completed_at', '>=', query.sinceMs);
  return q.orderBy('d.completed_at', 'desc').orderBy('d.id').limit(query.limit).execute();
}

export interface DeliveryQuery {
  subscriptionId?: string | undefined;
  organizationId?: string | undefined;
  /** Deliveries created (with their event) at or after this time. */
  sinceMs?: number | undefined;
  eventId?: string | undefined;
  status?: DeliveryStatus | undefined;
  limit: number;
}

/** Newest first, with their attempts in order. */
export async function listDeliveries(
  db: Tx,
  query: DeliveryQuery,
): Promise<{ delivery: WebhookDeliveryRow; attempts: WebhookAttemptRow[] }[]> {
  let q = db.selectFrom('webhook_deliveries').selectAll();
  if (query.subscriptionId !== undefined) q = q.where('subscription_id', '=', query.subscriptionId);
  if (query.eventId !== undefined) q = q.where('event_id', '=', query.eventId);
  if (query.organizationId !== undefined) q = q.where('organization_id', '=', query.organizationId);
  if (query.sinceMs !== undefined) q = q.where('created_at', '>=', query.sinceMs);
  if (query.status !== undefined) q = q.where('status', '=', query.status);
  const deliveries = await q.orderBy('created_at', 'desc').orderBy('id').limit(query.limit).execute();
  if (deliveries.length === 0) return [];
  const attempts = await db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where(
      'delivery_id',
      'in',
      deliveries.map((d) => d.id),
    )
    .orderBy('attempt_number')
    .orderBy('started_at')
    .execute();
  const byDelivery = new Map<string, WebhookAttemptRow[]>();
  for (const a of attempts) {
    const list = byDelivery.get(a.delivery_id) ?? [];
    list.push(a);
    byDelivery.set(a.delivery_id, list);
  }
  return deliveries.map((delivery) => ({ delivery, attempts: byDelivery.get(delivery.id) ?? [] }));
}

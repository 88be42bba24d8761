/**
 * Waking delivery workers when there is new work, so the happy path has no polling delay.
 * The writing transaction signals its channel (database/commitWatch.ts): PostgreSQL's NOTIFY is
 * delivered only on commit, to every worker process. SQLite: workers of this process are woken
 * directly; workers of other processes notice the channel's counter move (see worker.ts).
 */
import type { Kysely } from 'kysely';
import { type CommitWatch, signalCommit, watchCommits } from '../database/commitWatch.js';
import type { Store } from '../database/connection.js';
import { dialectOf } from '../database/dialect.js';
import type { Database } from '../database/schema.js';

export const DELIVERY_CHANNEL = 'eds_webhook_deliveries';

type Listener = () => void;
const listeners = new Set<Listener>();

/** Subscribes a worker of this process; returns the unsubscribe function. */
export function onDeliveryWork(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/**
 * Announces new or re-queued deliveries from inside the transaction that wrote them. In-process
 * listeners are called on a later turn: the claim they make queues behind the open transaction
 * on SQLite's single connection, so it sees the committed rows.
 */
export async function announceDeliveryWork(tx: Kysely<Database>): Promise<void> {
  await signalCommit(tx, DELIVERY_CHANNEL);
  if (dialectOf(tx) === 'postgres') return;
  if (listeners.size > 0) {
    setImmediate(() => {
      for (const listener of listeners) listener();
    });
  }
}

/** Calls `onWork` soon after another process commits new delivery work (database/commitWatch.ts). */
export function watchDeliveryWork(
  store: Store,
  connectionString: string | undefined,
  onWork: () => void,
  sqlitePollMs: number,
): CommitWatch {
  return watchCommits(store, connectionString, DELIVERY_CHANNEL, onWork, sqlitePollMs);
}

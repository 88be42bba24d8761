/**
 * Waking delivery workers when there is new work, so the happy path has no polling delay.
 * PostgreSQL: NOTIFY on a channel inside the writing transaction (delivered only on commit, to
 * every worker process). SQLite: workers of this process are woken directly; workers of other
 * processes notice the commit through `PRAGMA data_version` (see worker.ts).
 */
import { type Kysely, sql } from 'kysely';
import { type CommitWatch, watchCommits } from '../database/commitWatch.js';
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
  if (dialectOf(tx) === 'postgres') {
    await sql`select pg_notify(${DELIVERY_CHANNEL}, '')`.execute(tx);
    return;
  }
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

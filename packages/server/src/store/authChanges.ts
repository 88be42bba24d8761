/**
 * Cross-process invalidation of cached key verifications. Every write that can change an
 * authentication answer (a key's state, an organization's settings) calls `notifyAuthChanged`
 * inside its own transaction: on PostgreSQL a NOTIFY, delivered to every API process's LISTEN at
 * commit; on SQLite a counter the API process polls (database/commitWatch.ts). Either way the
 * cache TTL remains the fallback bound.
 */
import { type CommitWatch, signalCommit, watchCommits } from '../database/commitWatch.js';
import type { Db, Store } from '../database/connection.js';

export const AUTH_CHANNEL = 'eds_auth_changed';

export async function notifyAuthChanged(db: Db): Promise<void> {
  await signalCommit(db, AUTH_CHANNEL);
}

/** Calls `onChange` soon after any other process changes authentication data. */
export function watchAuthChanges(
  store: Store,
  connectionString: string | undefined,
  onChange: () => void,
  pollMs = 250,
): CommitWatch {
  return watchCommits(store, connectionString, AUTH_CHANNEL, onChange, pollMs);
}

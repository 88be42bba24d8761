/**
 * Cross-process invalidation of cached key verifications. Every write that can change an
 * authentication answer (a key's state, an organization's settings) calls `notifyAuthChanged`
 * inside its own transaction. On PostgreSQL that is a NOTIFY, delivered to every API process's
 * LISTEN at commit; on SQLite the API process instead watches `PRAGMA data_version`, which moves
 * whenever another connection commits. Either way the cache TTL remains the fallback bound.
 */
import { sql } from 'kysely';
import { type CommitWatch, watchCommits } from '../database/commitWatch.js';
import type { Db, Store } from '../database/connection.js';
import { dialectOf } from '../database/dialect.js';

export const AUTH_CHANNEL = 'eds_auth_changed';

export async function notifyAuthChanged(db: Db): Promise<void> {
  if (dialectOf(db) === 'postgres') await sql`SELECT pg_notify(${AUTH_CHANNEL}, '')`.execute(db);
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

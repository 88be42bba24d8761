/**
 * "Tell me soon after another process commits a change of this kind." Writers call
 * `signalCommit` inside the transaction that makes the change. PostgreSQL: a NOTIFY, delivered on
 * commit to a dedicated LISTEN connection on the change's channel, reconnected after errors,
 * reporting a change on every (re)connect since notices may have been missed meanwhile. SQLite:
 * the channel's counter in `change_signals`, advanced by the writer and read every
 * `sqlitePollMs` (one primary-key read). Not `PRAGMA data_version`, which moves on every commit
 * of another connection: the audit writer's commits, one every 0.5-1.5 ms under load, would
 * count as a change of every kind.
 * Used for key-cache invalidation and for waking delivery workers.
 */
import { type Kysely, sql } from 'kysely';
import type pg from 'pg';
import type { Store } from './connection.js';
import { dialectOf } from './dialect.js';
import { pgDriver } from './pgDriver.js';
import type { Database } from './schema.js';

/** Announces a change on `channel`, from inside the transaction that makes it (seen on commit). */
export async function signalCommit(db: Kysely<Database>, channel: string): Promise<void> {
  if (dialectOf(db) === 'postgres') {
    await sql`select pg_notify(${channel}, '')`.execute(db);
    return;
  }
  await db
    .insertInto('change_signals')
    .values({ channel, version: 1 })
    .onConflict((conflict) =>
      conflict.column('channel').doUpdateSet({ version: sql<number>`change_signals.version + 1` }),
    )
    .execute();
}

export interface CommitWatch {
  stop(): Promise<void>;
}

export function watchCommits(
  store: Store,
  connectionString: string | undefined,
  channel: string,
  onChange: () => void,
  sqlitePollMs: number,
): CommitWatch {
  if (store.sqlite) {
    const sqlite = store.sqlite;
    const counter = sqlite.prepare('select version from change_signals where channel = ?').pluck();
    const version = () => (counter.get(channel) as number | undefined) ?? 0;
    let last = version();
    const timer = setInterval(() => {
      // Inside a transaction of this connection the counter may be this process's own uncommitted
      // signal; the next tick reads it settled.
      if (sqlite.inTransaction) return;
      try {
        const now = version();
        if (now !== last) {
          last = now;
          onChange();
        }
      } catch {
        // An unreadable store is answered where it is used (503, or a logged claim failure).
      }
    }, sqlitePollMs);
    timer.unref();
    return { stop: async () => clearInterval(timer) };
  }

  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  const connect = async () => {
    if (stopped || !connectionString) return;
    const next = new (pgDriver().Client)({ connectionString, application_name: `eds listen ${channel}` });
    next.on('notification', () => onChange());
    next.on('error', () => scheduleReconnect());
    try {
      await next.connect();
      await next.query(`LISTEN ${channel}`);
      if (stopped) {
        await next.end().catch(() => {});
        return;
      }
      client = next;
      onChange();
    } catch {
      await next.end().catch(() => {});
      scheduleReconnect();
    }
  };
  const scheduleReconnect = () => {
    if (stopped || retry) return;
    const old = client;
    client = undefined;
    old?.end().catch(() => {});
    retry = setTimeout(() => {
      retry = undefined;
      void connect();
    }, 1000);
    retry.unref();
  };
  const started = connect();
  return {
    stop: async () => {
      stopped = true;
      if (retry) clearTimeout(retry);
      await started.catch(() => {});
      await client?.end().catch(() => {});
    },
  };
}

/**
 * "Tell me soon after another process commits a change of this kind." PostgreSQL: a dedicated
 * LISTEN connection on the change's channel (writers NOTIFY inside their transaction, so the
 * notice arrives only on commit), reconnected after errors, reporting a change on every
 * (re)connect since notices may have been missed meanwhile. SQLite: `PRAGMA data_version`, which
 * moves whenever another connection commits, read every `sqlitePollMs` (a cheap counter read).
 * Used for key-cache invalidation and for waking delivery workers.
 */
import type pg from 'pg';
import type { Store } from './connection.js';
import { pgDriver } from './pgDriver.js';

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
    let last = sqlite.pragma('data_version', { simple: true });
    const timer = setInterval(() => {
      try {
        const now = sqlite.pragma('data_version', { simple: true });
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

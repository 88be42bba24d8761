/**
 * Opens the store named by the configuration: an embedded SQLite file (better-sqlite3) or a
 * PostgreSQL pool (pg). Both are handed out as the same `Kysely<Database>`.
 */
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import type { DatabaseConfig } from '../config.js';
import { createPrivateFileIfAbsent, makePrivateDir } from '../privateFiles.js';
import type { Dialect } from './dialect.js';
import { ImmediateSqliteDialect } from './immediateSqliteDialect.js';
import { pgDriver } from './pgDriver.js';
import { ReadSnapshots } from './readSnapshot.js';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;

export interface Store {
  readonly db: Db;
  readonly dialect: Dialect;
  /** The raw SQLite handle, for the few hot paths that prepare their own statements. */
  readonly sqlite: SQLite.Database | undefined;
  /** The raw PostgreSQL pool, for LISTEN/NOTIFY. */
  readonly pgPool: pg.Pool | undefined;
  close(): Promise<void>;
}

const sqliteHandles = new WeakMap<Db, SQLite.Database>();

/** A SQLite file store's read snapshots: absent until `readThroughSnapshots` turns them on. */
interface SnapshotSlot {
  path: string;
  snapshots?: ReadSnapshots;
}
const snapshotSlots = new WeakMap<Db, SnapshotSlot>();
const pgPools = new WeakMap<Db, pg.Pool>();

/**
 * The better-sqlite3 handle behind a Kysely instance opened by `openStore`; undefined for
 * PostgreSQL and for a transaction (a transaction's statements must go through Kysely).
 */
export function sqliteHandleOf(db: Db): SQLite.Database | undefined {
  return sqliteHandles.get(db);
}

/** What a hot read prepares its statements on, on SQLite. */
export type SqliteReadConnection = ReadSnapshots | SQLite.Database;

/**
 * Where a hot read outside a transaction runs its prepared statements on SQLite: this turn's read
 * snapshot when the store reads through snapshots (readSnapshot.ts), else the connection itself;
 * undefined for PostgreSQL and while the connection is in a transaction (Kysely's path then).
 */
export function sqliteReadConnection(db: Db): SqliteReadConnection | undefined {
  const sqlite = sqliteHandles.get(db);
  if (sqlite === undefined || sqlite.inTransaction) return undefined;
  const snapshots = snapshotSlots.get(db)?.snapshots;
  if (snapshots === undefined) return sqlite;
  snapshots.enter();
  return snapshots;
}

/**
 * The API's hot reads share one read transaction per turn of the event loop (readSnapshot.ts).
 * Only for a process whose own writes to what those reads read go through Kysely (each of its
 * statements ends the snapshot) or end it themselves (`endReadSnapshot`).
 */
export function readThroughSnapshots(store: Store): void {
  const slot = snapshotSlots.get(store.db);
  if (slot) slot.snapshots ??= new ReadSnapshots(slot.path);
}

/** After a write of this process outside Kysely: the next read sees it. */
export function endReadSnapshot(db: Db): void {
  snapshotSlots.get(db)?.snapshots?.end();
}

/** The pg pool behind a Kysely instance opened by `openStore`; undefined otherwise (as above). */
export function pgPoolOf(db: Db): pg.Pool | undefined {
  return pgPools.get(db);
}

const INT8_OID = 20;
const NUMERIC_OID = 1700;

export interface OpenStoreOptions {
  /**
   * How PostgreSQL's `pg_stat_activity` names this store's connections, so an operator can tell
   * the audit writer's connection from the request pool's (an `application_name` in the URL wins).
   */
  applicationName?: string;
}

export function openStore(config: DatabaseConfig, options: OpenStoreOptions = {}): Store {
  if (config.dialect === 'sqlite') {
    if (config.path !== ':memory:') {
      // Patient data: the file (and so its WAL and journal, which SQLite gives its mode) is 0600.
      makePrivateDir(dirname(config.path));
      createPrivateFileIfAbsent(config.path);
    }
    const sqlite = new SQLite(config.path);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('foreign_keys = ON');
    const slot: SnapshotSlot | undefined = config.path === ':memory:' ? undefined : { path: config.path };
    // Every statement Kysely runs on the connection (a transaction's BEGIN and COMMIT included)
    // ends the read snapshot, so a read after this process's own write sees it.
    const endSnapshot = () => slot?.snapshots?.end();
    const db = new Kysely<Database>({
      dialect: new ImmediateSqliteDialect({ database: withStatementCache(sqlite, endSnapshot) }),
    });
    sqliteHandles.set(db, sqlite);
    if (slot) snapshotSlots.set(db, slot);
    const close = async () => {
      slot?.snapshots?.close();
      await db.destroy();
    };
    return { db, dialect: 'sqlite', sqlite, pgPool: undefined, close };
  }
  const driver = pgDriver();
  const pool = new driver.Pool({
    connectionString: config.url,
    application_name: options.applicationName ?? 'eds',
    max: config.poolSize,
    statement_timeout: config.statementTimeoutMs || undefined,
    connectionTimeoutMillis: 5000,
    // pg sends no statement_timeout of 0, which would leave a role's or database's own timeout in
    // force; "none" must mean none (`eds migrate` builds indexes over whole tables). The pool
    // hands a new client out only once this has run: a statement queued behind it from the
    // 'connect' event would share the client with the checkout's own, which pg deprecates.
    onConnect:
      config.statementTimeoutMs === 0
        ? async (client: pg.ClientBase) => {
            await client.query('SET statement_timeout = 0');
          }
        : undefined,
    // Epoch milliseconds and counts fit in a double; return numbers, not strings.
    types: {
      getTypeParser: ((oid: number, format?: string) =>
        oid === INT8_OID || oid === NUMERIC_OID
          ? (value: string) => Number(value)
          : driver.types.getTypeParser(oid, format as 'text')) as typeof driver.types.getTypeParser,
    },
  });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  // Nor may a client that is checked out (between the statements of a transaction) when the
  // server goes away: pg emits 'error' on it, and the pool listens only on idle clients. The
  // statement in flight fails on its own, and the pool drops the client when it comes back.
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  pgPools.set(db, pool);
  return { db, dialect: 'postgres', sqlite: undefined, pgPool: pool, close: () => db.destroy() };
}

/**
 * Kysely prepares every query's SQL afresh; better-sqlite3 statements are reusable, and the API
 * runs the same few statements over and over. Caching them (LRU, by SQL text) saves the parse and
 * plan on every request. Safe because Kysely runs one query at a time on the single connection.
 */
function withStatementCache(sqlite: SQLite.Database, beforeStatement: () => void, max = 512) {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql: string): SQLite.Statement {
      beforeStatement();
      const hit = cache.get(sql);
      if (hit) {
        cache.delete(sql);
        cache.set(sql, hit);
        return hit;
      }
      const statement = sqlite.prepare(sql);
      if (cache.size >= max) cache.delete(cache.keys().next().value as string);
      cache.set(sql, statement);
      return statement;
    },
  };
}

/** Runs `work` in a transaction, joining the caller's when `db` already is one. */
export async function inTransaction<T>(db: Db, work: (tx: Db) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}

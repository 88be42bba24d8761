/**
 * A read the API runs on every request, built with Kysely once and from then on executed by its
 * SQL text with new values. Kysely builds and compiles a query afresh on each call; on the detail
 * routes that cost more than SQLite's own work (a profile put the query builder at 15 % of the
 * process). These queries never change shape, only their values, so the compiled SQL is kept
 * and the caller's values are put in the parameter slots the sentinels marked.
 *
 * On SQLite the statement is also prepared once and run directly when no transaction holds the
 * connection (in the turn's read snapshot when the store reads through snapshots, see
 * readSnapshot.ts): better-sqlite3 is synchronous, so nothing can interleave with it, and
 * Kysely's connection queue and promise chain (several times SQLite's own work for a primary-key
 * read) are skipped. On PostgreSQL the query is a named prepared statement, parsed and planned once per
 * connection instead of on every call (planning was more than half of a list page's statement
 * time); a read made `turnBatched` sends the calls of one event-loop turn as one statement
 * (pgTurnBatch.ts). Inside a transaction the query goes through Kysely, on the transaction's connection.
 *
 * On SQLite every value must reach the statement through unplannedValue.ts's casts: a bare
 * placeholder can make SQLite plan the statement afresh on every call. A read that leaves one is
 * refused whenever it is called (from its first call on), rather than found in a profile.
 *
 * Rows are read as arrays and turned into objects by a function generated once per statement
 * from its column names: better-sqlite3 builds each row object property by property, which cost
 * more than the B-tree work itself on a list page (measured at 1M encounters: 189 µs for a page
 * of 50 encounters with patients as objects, 117 µs as arrays mapped this way).
 */
import type SQLite from 'better-sqlite3';
import { type Compilable, CompiledQuery } from 'kysely';
import { arrayRowBuilder } from './arrayRows.js';
import { type Db, pgPoolOf, type SqliteReadConnection, sqliteReadConnection } from './connection.js';
import { isSqlite } from './dialect.js';
import { PgTurnBatch } from './pgTurnBatch.js';
import { BARE_PLACEHOLDER } from './unplannedValue.js';

type Slot = { arg: number } | { value: unknown };

interface Plan {
  /** PostgreSQL's name for the prepared statement: unique in the process. */
  name: string;
  sql: string;
  slots: Slot[];
  /**
   * SQLite only: the statement, prepared on first use outside a transaction on the connection
   * reads run on, and its row shape.
   */
  sqlite?:
    | {
        on: SqliteReadConnection;
        statement: SQLite.Statement;
        toRow: (values: unknown[]) => unknown;
        width: number;
      }
    | undefined;
  /** PostgreSQL only, for a read made with `turnBatched`: the turn's calls in one statement. */
  turnBatch?: PgTurnBatch | undefined;
}

/** Values that reach SQL as parameters; a sentinel of the same type marks each one. */
type Arg = string | number;

export interface PreparedQueryOptions {
  /**
   * On PostgreSQL, send the calls made in one event-loop turn as one statement (pgTurnBatch.ts):
   * for the reads every request makes. A number argument goes as a bigint, so it must be an
   * integer (an epoch millisecond, a day, a limit or an offset); the first call's argument types
   * are the statement's, and a call with others (or another number) runs on its own.
   */
  turnBatched?: boolean;
}

export function preparedQuery<Args extends Arg[], Row>(
  build: (db: Db, ...args: Args) => Compilable<Row>,
  options: PreparedQueryOptions = {},
): (db: Db, ...args: Args) => Promise<Row[]> {
  // Per Kysely instance, since the SQL text depends on the dialect.
  const plans = new WeakMap<Db, Plan>();
  return async (db, ...args) => {
    let plan = plans.get(db);
    if (!plan) {
      plan = compilePlan(db, build, args.length);
      plans.set(db, plan);
    }
    const parameters = plan.slots.map((slot) => ('arg' in slot ? args[slot.arg] : slot.value));
    const sqlite = sqliteReadConnection(db);
    if (sqlite !== undefined) {
      if (plan.sqlite?.on !== sqlite) plan.sqlite = prepareRaw(sqlite, plan.sql);
      const { statement, toRow, width } = plan.sqlite;
      const rows = statement.all(parameters) as unknown[][];
      if (rows.length > 0 && rows[0]!.length !== width) {
        // Cannot happen with named columns; if it ever does, fail rather than misplace values
        // (the next call prepares the statement and its row shape afresh).
        plan.sqlite = undefined;
        throw new Error('preparedQuery: a statement changed its columns');
      }
      return rows.map(toRow) as Row[];
    }
    const pool = pgPoolOf(db);
    if (pool !== undefined) {
      if (options.turnBatched) {
        plan.turnBatch ??= PgTurnBatch.forCall(pool, plan, args);
        if (plan.turnBatch?.takes(args)) return (await plan.turnBatch.read(parameters)) as Row[];
      }
      return (await pool.query({ name: plan.name, text: plan.sql, values: parameters })).rows as Row[];
    }
    const result = await db.executeQuery<Row>(CompiledQuery.raw(plan.sql, parameters));
    return result.rows;
  };
}

function compilePlan<Args extends Arg[], Row>(
  db: Db,
  build: (db: Db, ...args: Args) => Compilable<Row>,
  arity: number,
): Plan {
  // A sentinel only has to differ from the query's own constants ('document', 0, …).
  const sentinels = Array.from({ length: arity }, (_, i) => `\u0000prepared-arg-${i}\u0000`);
  const compiled = build(db, ...(sentinels as Args)).compile();
  // `*` would let a later migration change an already-prepared statement's columns (SQLite
  // re-prepares it with the new shape; PostgreSQL refuses a cached plan whose result changed).
  if (/\*\s+from\b|\.\*/i.test(compiled.sql)) {
    throw new Error('preparedQuery: name every column instead of selecting *');
  }
  if (isSqlite(db) && BARE_PLACEHOLDER.test(compiled.sql)) {
    throw new Error(
      'preparedQuery: on SQLite pass every argument through unplannedInteger or unplannedText, and ' +
        `write constants with sql.lit: ${compiled.sql}`,
    );
  }
  const slots = compiled.parameters.map((value): Slot => {
    const arg = sentinels.indexOf(value as string);
    return arg >= 0 ? { arg } : { value };
  });
  const used = new Set(slots.flatMap((slot) => ('arg' in slot ? [slot.arg] : [])));
  if (used.size !== arity) {
    // An argument that shaped the SQL instead of becoming a parameter would be frozen in here.
    throw new Error(`preparedQuery: ${arity - used.size} argument(s) did not become parameters`);
  }
  return { name: `eds_prepared_${++planCount}`, sql: compiled.sql, slots };
}

let planCount = 0;

function prepareRaw(on: SqliteReadConnection, sql: string): NonNullable<Plan['sqlite']> {
  const statement = on.prepare(sql).raw(true);
  const names = statement.columns().map((column) => column.name);
  return { on, statement, toRow: arrayRowBuilder(names), width: names.length };
}

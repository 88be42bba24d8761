/**
 * A read the API runs on every request, built with Kysely once and from then on executed by its
 * SQL text with new values. Kysely builds and compiles a query afresh on each call; on the detail
 * routes that cost more than SQLite's own work (a profile put the query builder at 15 % of the
 * process). These queries never change shape, only their values, so the compiled SQL is kept
 * and the caller's values are put in the parameter slots the sentinels marked.
 *
 * On SQLite the statement is also prepared once and run directly when no transaction holds the
 * connection: better-sqlite3 is synchronous, so nothing can interleave with it, and Kysely's
 * connection queue and promise chain (several times SQLite's own work for a primary-key read)
 * are skipped. Inside a transaction, or on PostgreSQL, the query goes through Kysely.
 */
import type SQLite from 'better-sqlite3';
import { type Compilable, CompiledQuery } from 'kysely';
import { type Db, sqliteHandleOf } from './database.js';

type Slot = { arg: number } | { value: unknown };

interface Plan {
  sql: string;
  slots: Slot[];
  /** SQLite only: the statement, prepared on first use outside a transaction. */
  statement?: SQLite.Statement;
}

/** Values that reach SQL as parameters; a sentinel of the same type marks each one. */
type Arg = string | number;

export function preparedQuery<Args extends Arg[], Row>(
  build: (db: Db, ...args: Args) => Compilable<Row>,
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
    const sqlite = sqliteHandleOf(db);
    if (sqlite !== undefined && !sqlite.inTransaction) {
      plan.statement ??= sqlite.prepare(plan.sql);
      return plan.statement.all(parameters) as Row[];
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
  const slots = compiled.parameters.map((value): Slot => {
    const arg = sentinels.indexOf(value as string);
    return arg >= 0 ? { arg } : { value };
  });
  const used = new Set(slots.flatMap((slot) => ('arg' in slot ? [slot.arg] : [])));
  if (used.size !== arity) {
    // An argument that shaped the SQL instead of becoming a parameter would be frozen in here.
    throw new Error(`preparedQuery: ${arity - used.size} argument(s) did not become parameters`);
  }
  return { sql: compiled.sql, slots };
}

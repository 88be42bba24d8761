/**
 * A value bound to a statement that SQLite's planner does not read while it plans.
 *
 * SQLite looks at the value bound to some placeholders while it plans, and so prepares the
 * statement again every time a value is bound to one of them, which is on every call:
 * - a bare `LIMIT ?` (in the SQLite this service runs, 3.53);
 * - a column compared with a bare `?`, once a full ANALYZE has stored samples of the column's
 *   index (sqlite_stat4; the service's own `PRAGMA optimize` stores none).
 *
 * For the list's page read that was about a quarter of the read's time (30 against 22 µs for a
 * page of 50, better-sqlite3 directly), and 9 % of the request thread's on the list under load.
 * The request path's reads find their rows by an index's range whatever the values, so they pass
 * them through a CAST, which the planner does not look into: preparedQuery refuses a read that
 * leaves SQLite a bare placeholder, and the roll-ups' walk, raw SQL, casts its own. PostgreSQL
 * gets the value as it is. The type is the caller's to say: preparedQuery compiles the statement
 * with placeholders, not with the values.
 *
 * An integer's value must be whole (epoch milliseconds, days, hours, a limit, an offset): the CAST
 * would cut a fraction off, where the bare value compared exactly.
 */
import { type Expression, sql } from 'kysely';
import type { Db } from './connection.js';
import { isSqlite } from './dialect.js';

/**
 * A placeholder SQLite would plan with: Kysely writes `?` for every parameter on SQLite, and
 * these functions wrap theirs in `cast(`. A literal holding `?` (sql.lit, sql.raw) is taken for
 * one too, which errs on the safe side.
 */
export const BARE_PLACEHOLDER = /(?<!\bcast\()\?/i;

export function unplannedInteger(db: Db, value: number): number | Expression<number> {
  return isSqlite(db) ? sql<number>`cast(${value} as integer)` : value;
}

export function unplannedText(db: Db, value: string): string | Expression<string> {
  return isSqlite(db) ? sql<string>`cast(${value} as text)` : value;
}

/**
 * A value bound to a statement that SQLite's planner does not read while it plans.
 *
 * SQLite plans some statements with the values bound to them, and then prepares the statement
 * again every time a new value is bound, which is on every call:
 * - from 3.47 on, a bare `LIMIT ?` or `OFFSET ?`;
 * - a column compared with a bare `?`, once a full ANALYZE has stored samples of the column's
 *   index (sqlite_stat4; the service's own `PRAGMA optimize` stores none).
 *
 * For the list's page read that was about a quarter of the read's time (30 against 22 µs for a
 * page of 50, better-sqlite3 directly), and 9 % of the request thread's on the list under load.
 * A read whose plan is its index's range whatever the values passes them through a CAST, which
 * the planner does not look into. PostgreSQL gets the value as it is. The type is the caller's to
 * say: preparedQuery compiles the statement with placeholders, not with the values.
 */
import { type Expression, sql } from 'kysely';
import type { Db } from './connection.js';
import { isSqlite } from './dialect.js';

export function unplannedInteger(db: Db, value: number): number | Expression<number> {
  return isSqlite(db) ? sql<number>`cast(${value} as integer)` : value;
}

export function unplannedText(db: Db, value: string): string | Expression<string> {
  return isSqlite(db) ? sql<string>`cast(${value} as text)` : value;
}

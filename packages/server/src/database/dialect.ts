/**
 * The one place that knows which SQL dialect is underneath. Everything else writes Kysely that
 * runs on both; code asks here only where a dialect-specific statement pays for itself.
 */
import { SqliteAdapter } from 'kysely';

export type Dialect = 'sqlite' | 'postgres';

interface HasExecutor {
  getExecutor(): { readonly adapter: unknown };
}

export function dialectOf(db: HasExecutor): Dialect {
  return db.getExecutor().adapter instanceof SqliteAdapter ? 'sqlite' : 'postgres';
}

export function isSqlite(db: HasExecutor): boolean {
  return dialectOf(db) === 'sqlite';
}

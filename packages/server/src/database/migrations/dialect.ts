/**
 * Which dialect a migration runs on. Migrations carry their own copy of everything they use
 * (database/dialect.ts serves the live code): a migration must mean forever what it meant when it
 * shipped, whatever the rest of the code becomes.
 */
import { SqliteAdapter } from 'kysely';

export function isSqlite(db: { getExecutor(): { readonly adapter: unknown } }): boolean {
  return db.getExecutor().adapter instanceof SqliteAdapter;
}

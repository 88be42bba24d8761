/**
 * Which dialect a migration runs on. Migrations carry their own copy of everything they use
 * (database/dialect.ts serves the live code): a migration must mean forever what it meant when it
 * shipped, whatever the rest of the code becomes.
 */
import { type Kysely, SqliteAdapter } from 'kysely';

export function isSqlite(db: { getExecutor(): { readonly adapter: unknown } }): boolean {
  return db.getExecutor().adapter instanceof SqliteAdapter;
}

/**
 * Kysely runs a PostgreSQL migration in a transaction, but each SQLite statement on its own: a
 * migration that changes the schema and fills it runs its steps in one transaction there too, so a
 * run cut short leaves nothing half done, and SQLite's write lock is held from the first step.
 */
export async function atomically(db: Kysely<unknown>, steps: (db: Kysely<unknown>) => Promise<void>) {
  if (isSqlite(db)) await db.transaction().execute(steps);
  else await steps(db);
}

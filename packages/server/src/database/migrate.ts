/**
 * The schema migrations (database/migrations/): frozen DDL and data steps, applied in order and
 * recorded in the database, so each runs once per store.
 */
import { Migrator } from 'kysely';
import type { Db } from './connection.js';
import { migrationProvider } from './migrations/index.js';

/** Creates or upgrades the schema; safe to repeat. Returns the names it applied. */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Whether every known migration has been applied (for /readyz). */
export async function migrationsCurrent(db: Db): Promise<boolean> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const all = await migrator.getMigrations();
  return all.every((m) => m.executedAt !== undefined);
}

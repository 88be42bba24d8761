/**
 * Brings a store up to this release. First the schema migrations (database/migrations/): frozen DDL
 * and data steps that mean today what they meant when they shipped. Then the steps that build
 * derived data with this release's own code, which no migration may call: the read model's stored
 * answers for clinical data that has none (stored before the read model existed, or left behind
 * by a build cut short). `eds migrate`, `eds demo` and the test stores all upgrade through here.
 */
import type { Db } from './database/connection.js';
import { migrateToLatest } from './database/migrate.js';
import { readModelIncomplete, rebuildReadModel } from './readModel/write/rebuild.js';

export interface StoreUpgrade {
  /** The migrations applied, in order. */
  migrated: string[];
  /** The build steps that ran ('read_model'); empty when everything was current. */
  built: string[];
}

export async function upgradeStore(db: Db): Promise<StoreUpgrade> {
  const migrated = await migrateToLatest(db);
  const built: string[] = [];
  // Built whole, a page per transaction: repeating it writes the same bytes, so a build cut
  // short is finished by the next run.
  if (await readModelIncomplete(db)) {
    await rebuildReadModel(db);
    built.push('read_model');
  }
  return { migrated, built };
}

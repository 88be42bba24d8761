/**
 * Brings a store up to this release. First the schema migrations (database/migrations/): frozen DDL
 * and data steps that mean today what they meant when they shipped. Then the steps that build
 * derived data with this release's own code, which no migration may call: the read model's stored
 * answers for clinical data that has none (stored before the read model existed, or left behind
 * by a build cut short), and the encounter counts of organizations whose counts no longer agree
 * with their encounters. `eds migrate`, `eds demo` and the test stores all upgrade through here.
 */
import { type Db, inTransaction } from './database/connection.js';
import { migrateToLatest } from './database/migrate.js';
import { readModelIncomplete, rebuildReadModel } from './readModel/write/rebuild.js';
import { rebuildEncounterCounts } from './store/clinicalWrites.js';
import { organizationsWithDriftedCounts } from './store/countRollupDrift.js';

export interface StoreUpgrade {
  /** The migrations applied, in order. */
  migrated: string[];
  /** The build steps that ran ('read_model', 'encounter_counts'); empty when everything was current. */
  built: string[];
  /** The organizations whose encounter counts were rebuilt; empty when all agreed. */
  recounted: string[];
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
  // An organization per transaction, each taking the organization's total first as every import
  // does: imports of this release may run beside it, and one that commits first is counted.
  const recounted = await organizationsWithDriftedCounts(db);
  for (const organizationId of recounted) {
    await inTransaction(db, (tx) => rebuildEncounterCounts(tx, organizationId));
  }
  if (recounted.length > 0) built.push('encounter_counts');
  return { migrated, built, recounted };
}

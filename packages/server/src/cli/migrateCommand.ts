/**
 * `eds migrate`: creates or upgrades the schema, then builds what the new release derives from
 * stored data (upgradeStore.ts); repeating it applies nothing.
 */
import type { Command } from 'commander';
import { refreshPlannerStatistics } from '../database/plannerStatistics.js';
import { upgradeStore } from '../upgradeStore.js';
import type { runCommand } from './runCommand.js';

export function registerMigrateCommand(program: Command, run: typeof runCommand): void {
  program
    .command('migrate')
    .description('create or upgrade the database schema (safe to repeat)')
    .action(() =>
      run(
        async ({ services }) => {
          const upgrade = await upgradeStore(services.store.db);
          // A migration or build that rewrote rows leaves them not yet visible to index-only
          // scans and the planner's statistics behind, as a bulk load does, until autovacuum
          // (if it is on) comes round.
          if (upgrade.migrated.length > 0 || upgrade.built.length > 0)
            await refreshPlannerStatistics(services.store, services.logger);
          return upgrade;
        },
        { requireSchema: false, withoutStatementTimeout: true },
      ),
    );
}

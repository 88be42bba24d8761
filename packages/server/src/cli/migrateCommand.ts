/**
 * `eds migrate`: creates or upgrades the schema, then builds what the new release derives from
 * stored data (upgradeStore.ts); repeating it applies nothing.
 */
import type { Command } from 'commander';
import { upgradeStore } from '../upgradeStore.js';
import type { runCommand } from './runCommand.js';

export function registerMigrateCommand(program: Command, run: typeof runCommand): void {
  program
    .command('migrate')
    .description('create or upgrade the database schema (safe to repeat)')
    .action(() =>
      run(({ services }) => upgradeStore(services.store.db), {
        requireSchema: false,
        withoutStatementTimeout: true,
      }),
    );
}

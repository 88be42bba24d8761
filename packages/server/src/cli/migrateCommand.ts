/** `eds migrate`: creates or upgrades the schema; repeating it applies nothing. */
import type { Command } from 'commander';
import { migrateToLatest } from '../store/database.js';
import type { runCommand } from './runCommand.js';

export function registerMigrateCommand(program: Command, run: typeof runCommand): void {
  program
    .command('migrate')
    .description('create or upgrade the database schema (safe to repeat)')
    .action(() =>
      run(async ({ services }) => ({ migrated: await migrateToLatest(services.store.db) }), {
        requireSchema: false,
      }),
    );
}

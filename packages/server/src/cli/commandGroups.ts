/**
 * The `eds` command groups, in the order `eds --help` lists them, each with the top-level
 * commands it registers and its module, imported only when a run needs it. A run names its
 * command first, so `eds serve` loads the serve group and nothing of the webhook, import or demo
 * commands: their modules (the webhook tools reach undici) would otherwise stay in the serving
 * process's heap for its whole life.
 */
import type { Command } from 'commander';
import type { runCommand } from './runCommand.js';

export type RegisterCommands = (program: Command, run: typeof runCommand) => void;

export interface CommandGroup {
  /** The top-level commands the group registers. */
  commands: readonly string[];
  load(): Promise<RegisterCommands>;
}

export const COMMAND_GROUPS: readonly CommandGroup[] = [
  { commands: ['migrate'], load: async () => (await import('./migrateCommand.js')).registerMigrateCommand },
  {
    commands: ['serve', 'worker'],
    load: async () => (await import('./serveCommands.js')).registerServeCommands,
  },
  { commands: ['demo'], load: async () => (await import('./demoCommand.js')).registerDemoCommand },
  { commands: ['import'], load: async () => (await import('./importCommand.js')).registerImportCommand },
  { commands: ['org'], load: async () => (await import('./orgCommands.js')).registerOrgCommands },
  { commands: ['key'], load: async () => (await import('./keyCommands.js')).registerKeyCommands },
  { commands: ['webhook'], load: async () => (await import('./webhookCommands.js')).registerWebhookCommands },
  { commands: ['audit'], load: async () => (await import('./auditCommand.js')).registerAuditCommand },
];

/**
 * The groups a run with these arguments (after `eds`) needs: the one that owns its first
 * argument, or every group when that names none (`--help`, `help`, a mistyped command), so
 * that help lists them all and a mistake is answered with the full list.
 */
export function groupsFor(args: readonly string[]): readonly CommandGroup[] {
  const first = args[0];
  const owner = COMMAND_GROUPS.find((group) => first !== undefined && group.commands.includes(first));
  return owner ? [owner] : COMMAND_GROUPS;
}

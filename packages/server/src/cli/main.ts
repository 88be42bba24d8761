/**
 * The `eds` command line: wires the command groups a run needs (./commandGroups.ts) onto one
 * Commander program.
 *
 * Interface for command groups (e.g. `registerWebhookCommands` in ./webhookCommands.ts):
 *
 *   export function registerXCommands(program: Command, run: typeof runCommand): void
 *
 * where `runCommand(action, options?)` (./runCommand.ts) is
 *
 *   runCommand(
 *     action: ({ config, services }: CommandContext) => Promise<unknown>,
 *     options?: { requireSchema?: boolean },   // default true: refuse an unmigrated database
 *   ): Promise<void>
 *
 * It loads `.env` and the configuration once, builds the services, runs the action, prints the
 * returned value as one JSON object on stdout (nothing when it returns undefined), closes the
 * services, and maps errors to exit codes: `OperatorError` / `ConfigError` → one clear message
 * on stderr and exit 1, no stack trace; anything else → the stack, exit 1. Option values are best
 * checked with Commander argument parsers (./optionParsers.ts) so a bad one stops the command
 * before anything is opened.
 */
import { Command } from 'commander';
import { groupsFor } from './commandGroups.js';
import { runCommand } from './runCommand.js';

const program = new Command('eds')
  .description('Encounter Data Service: operator commands')
  .showHelpAfterError('(run eds --help for usage)')
  .configureHelp({ sortSubcommands: false });

for (const group of groupsFor(process.argv.slice(2))) (await group.load())(program, runCommand);

await program.parseAsync(process.argv);

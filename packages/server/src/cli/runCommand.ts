/**
 * The one wrapper every `eds` command action runs in: configuration loaded once (a `.env` in the
 * working directory first, when there is one), services built, the action run, its result printed
 * as one JSON object, services closed. Operator mistakes become a short message on stderr and a
 * non-zero exit code, never a stack trace.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CommanderError } from 'commander';
import { type Config, ConfigError, loadConfig } from '../config.js';
import { migrationsCurrent } from '../database/migrate.js';
import { OperatorError } from '../domain/errors.js';
import { createServices, type Services } from '../services.js';
import { note, printJson } from './output.js';

export interface CommandContext {
  readonly config: Config;
  readonly services: Services;
}

export interface RunOptions {
  /**
   * Refuse to run on a database whose schema is missing or behind (default true): an operator
   * gets "run eds migrate" instead of an SQL error. `migrate` and `demo` migrate themselves.
   */
  readonly requireSchema?: boolean;
  /**
   * Run without PostgreSQL's `statement_timeout` (default false). The timeout bounds what a
   * request may cost; `eds migrate` builds indexes and roll-ups over whole tables, which takes
   * longer the more data there is, and an operator runs it knowingly.
   */
  readonly withoutStatementTimeout?: boolean;
}

/** Returns a JSON-serialisable result to print, or undefined when the action printed its own output. */
export type CommandAction = (context: CommandContext) => Promise<unknown>;

export const EXIT_FAILURE = 1;
/** The exit code for a mistake in the command line itself (Commander's own errors use 1 too). */
export const EXIT_USAGE = 2;

export async function runCommand(action: CommandAction, options: RunOptions = {}): Promise<void> {
  let services: Services | undefined;
  try {
    const config = options.withoutStatementTimeout ? withoutStatementTimeout(loadOnce()) : loadOnce();
    services = createServices(config);
    if ((options.requireSchema ?? true) && !(await migrationsCurrent(services.store.db))) {
      throw new OperatorError('the database schema is missing or out of date; run `eds migrate` first');
    }
    const result = await action({ config, services });
    if (result !== undefined) printJson(result);
  } catch (error) {
    process.exitCode = reportFailure(error);
  } finally {
    await services?.close().catch(() => {});
  }
}

let loaded: Config | undefined;

/** Configuration is read once per process, whatever the number of commands that ask for it. */
function loadOnce(): Config {
  if (loaded) return loaded;
  const envFile = join(process.cwd(), '.env');
  if (existsSync(envFile)) process.loadEnvFile(envFile);
  loaded = loadConfig();
  return loaded;
}

function withoutStatementTimeout(config: Config): Config {
  const { database } = config;
  if (database.dialect !== 'postgres') return config;
  return { ...config, database: { ...database, statementTimeoutMs: 0 } };
}

/** Prints the failure for a person and returns the exit code. */
export function reportFailure(error: unknown): number {
  if (error instanceof OperatorError || error instanceof ConfigError) {
    note(`eds: ${error.message}`);
    return EXIT_FAILURE;
  }
  if (error instanceof CommanderError) {
    note(`eds: ${error.message}`);
    return EXIT_USAGE;
  }
  // Not an operator mistake: keep the stack, somebody has to debug it.
  note(`eds: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return EXIT_FAILURE;
}

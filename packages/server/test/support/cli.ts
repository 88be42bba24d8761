/**
 * Runs the real `eds` command (bin/eds.js) in a subprocess against a test database, the way an
 * operator would, and captures its exit code and output.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config.js';
import { createServices, type ServiceOverrides, type Services } from '../../src/services.js';
import { TEST_DIGEST_SECRET, TEST_MEDIA_SECRET } from './fixtures.js';
import { createTestStore, type StoreKind, type TestDatabase } from './stores.js';

/** The package's `eds` script: the TypeScript sources through tsx. */
export const EDS_BIN_SCRIPT = fileURLToPath(new URL('../../bin/eds.js', import.meta.url));
/**
 * What a test starts as `eds`: the entry of the sources transpiled once for the whole run when
 * the test runner made them (scripts/run-tests.mjs), else the package's script.
 */
export const EDS_BIN = process.env.TEST_EDS_CLI ?? EDS_BIN_SCRIPT;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of a subprocess using this database: no EDS_* setting leaks in from outside. */
export function cliEnv(database: TestDatabase, extra: Record<string, string> = {}): Record<string, string> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] =>
        entry[1] !== undefined && !entry[0].startsWith('EDS_') && entry[0] !== 'NODE_ENV',
    ),
  );
  return {
    ...inherited,
    EDS_DATABASE_URL: database.url,
    EDS_DATA_DIR: database.dir,
    EDS_KEY_DIGEST_SECRET: TEST_DIGEST_SECRET,
    EDS_MEDIA_SIGNING_SECRET: TEST_MEDIA_SECRET,
    EDS_LOG_LEVEL: 'silent',
    EDS_AUDIT_COMMIT_TIMEOUT_MS: '60000',
    ...extra,
  };
}

export function runEds(
  args: readonly string[],
  env: Record<string, string>,
  cwd?: string,
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [EDS_BIN, ...args], {
      env,
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs a command that must succeed and returns its one JSON object. */
export async function edsJson<T = Record<string, unknown>>(
  args: readonly string[],
  env: Record<string, string>,
): Promise<T> {
  const result = await runEds(args, env);
  if (result.code !== 0) {
    throw new Error(`eds ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  }
  return JSON.parse(result.stdout) as T;
}

/**
 * The services an `eds` command builds, in-process, on a fresh migrated database: for tests of
 * the importer and the demo that call them directly. `close` also drops the database.
 */
export async function createCommandServices(
  kind: StoreKind,
  env: Record<string, string> = {},
  overrides: ServiceOverrides = {},
): Promise<{ services: Services; database: TestDatabase; close(): Promise<void> }> {
  const store = await createTestStore(kind);
  const config = loadConfig(
    {
      EDS_DATABASE_URL: store.database.url,
      EDS_DATA_DIR: store.database.dir,
      EDS_KEY_DIGEST_SECRET: TEST_DIGEST_SECRET,
      EDS_MEDIA_SIGNING_SECRET: TEST_MEDIA_SECRET,
      EDS_LOG_LEVEL: 'silent',
      ...env,
    },
    store.database.dir,
  );
  const services = createServices(config, { store, ...overrides });
  return { services, database: store.database, close: () => services.close() };
}

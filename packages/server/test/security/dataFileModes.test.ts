/**
 * Files that hold patient data or secrets are readable by the service's user only (decisions.md,
 * Hardening): the SQLite database with its WAL and shared-memory files, media copies and
 * generated secrets are created 0600 in folders 0700, even by an `eds` whose umask takes nothing
 * away; `eds serve` warns at start-up about such a file that other users can read.
 */
import assert from 'node:assert/strict';
import { chmodSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { cliEnv, runEds } from '../support/cli.js';
import { startServeProcess } from '../support/processes.js';
import { createTestDatabase, forEachStore, type StoreKind, type TestDatabase } from '../support/stores.js';

const PERMISSIVE_UMASK = fileURLToPath(new URL('./fixtures/permissiveUmask.mjs', import.meta.url));

/** Every file and folder under `dir` (itself included): its permission bits in octal, `d` for a folder. */
function modesUnder(dir: string): Map<string, string> {
  const modes = new Map<string, string>();
  const visit = (path: string) => {
    const stat = statSync(path);
    const folder = stat.isDirectory();
    modes.set(relative(dir, path) || '.', `${folder ? 'd' : ''}${(stat.mode & 0o777).toString(8)}`);
    if (folder) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(dir);
  return modes;
}

/** An `eds` environment with a data folder it must create and secrets it must generate. */
function permissiveEnv(kind: StoreKind, database: TestDatabase, dataDir: string): Record<string, string> {
  const env = cliEnv(database, {
    EDS_DATA_DIR: dataDir,
    EDS_LOG_LEVEL: 'warn',
    NODE_OPTIONS: `--import ${PERMISSIVE_UMASK}`,
    ...(kind === 'sqlite' ? { EDS_DATABASE_URL: join(dataDir, 'eds.sqlite') } : {}),
  });
  delete env.EDS_KEY_DIGEST_SECRET;
  delete env.EDS_MEDIA_SIGNING_SECRET;
  return env;
}

forEachStore('data file modes', (kind) => {
  test('security: under a umask of 0, the database, its WAL, media copies and secrets are 0600 in folders 0700', async () => {
    const database = await createTestDatabase(kind);
    const dataDir = join(database.dir, 'data');
    const env = permissiveEnv(kind, database, dataDir);
    try {
      const demo = await runEds(['demo', '--encounters', '2', '--seed', '5'], env);
      assert.equal(demo.code, 0, demo.stderr);
      // While the API runs, SQLite's WAL and shared-memory files exist too.
      const server = await startServeProcess(env);
      let modes: Map<string, string>;
      try {
        modes = modesUnder(dataDir);
      } finally {
        await server.stop();
      }
      const expected = ['.', 'secrets.json', 'media'];
      if (kind === 'sqlite') expected.push('eds.sqlite', 'eds.sqlite-wal', 'eds.sqlite-shm');
      for (const name of expected) assert.ok(modes.has(name), `${name} exists: ${[...modes.keys()]}`);
      assert.ok(
        [...modes.keys()].some((name) => name.startsWith('media/') && name.endsWith('.wav')),
        'the demo copied recordings',
      );
      for (const [name, mode] of modes) assert.match(mode, /^(d700|600)$/, `${name} is ${mode}`);
      assert.ok(
        !server.stdout.some((line) => line.includes('open to other users')),
        'no warning when every file is private',
      );
    } finally {
      await database.drop();
    }
  });
});

test('security: eds serve warns at start-up about a data file other users can read, naming it', async () => {
  const database = await createTestDatabase('sqlite');
  const dataDir = join(database.dir, 'data');
  const env = permissiveEnv('sqlite', database, dataDir);
  try {
    const demo = await runEds(['demo', '--encounters', '1'], env);
    assert.equal(demo.code, 0, demo.stderr);
    chmodSync(join(dataDir, 'eds.sqlite'), 0o644);
    chmodSync(join(dataDir, 'secrets.json'), 0o640);
    const server = await startServeProcess(env);
    await server.stop();
    const warnings = server.stdout
      .filter((line) => line.includes('open to other users'))
      .map((line) => JSON.parse(line));
    // SQLite gave the WAL and shared-memory files the database's mode when `eds serve` opened it.
    assert.deepEqual(warnings.map((w) => [w.level, w.path, w.mode]).sort(), [
      [40, join(dataDir, 'eds.sqlite'), '644'],
      [40, join(dataDir, 'eds.sqlite-shm'), '644'],
      [40, join(dataDir, 'eds.sqlite-wal'), '644'],
      [40, join(dataDir, 'secrets.json'), '640'],
    ]);
  } finally {
    await database.drop();
  }
});

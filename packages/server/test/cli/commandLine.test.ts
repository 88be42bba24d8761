import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { cliEnv, runEds } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/stores.js';

let database: TestDatabase;
before(async () => {
  database = await createTestDatabase('sqlite');
});
after(() => database.drop());

test('--help lists the commands', async () => {
  const result = await runEds(['--help'], cliEnv(database));
  assert.equal(result.code, 0);
  for (const command of ['migrate', 'serve', 'worker', 'demo', 'import', 'org', 'key', 'audit']) {
    assert.match(result.stdout, new RegExp(`\\n  ${command}\\b`));
  }
});

test('invalid configuration names the setting, without a stack trace, and exits 1', async () => {
  const result = await runEds(['migrate'], cliEnv(database, { EDS_PORT: 'eighty', EDS_WEBHOOK_JITTER: '3' }));
  assert.equal(result.code, 1);
  assert.match(result.stderr, /EDS_PORT must be a whole number/);
  assert.match(result.stderr, /EDS_WEBHOOK_JITTER must be a number/);
  assert.doesNotMatch(result.stderr, /\n\s+at /);
  assert.equal(existsSync(database.url), false, 'nothing was created');
});

test('bad rate-limit, Redis and proxy settings are refused at start-up, each by its name', async () => {
  const result = await runEds(
    ['serve'],
    cliEnv(database, {
      EDS_RATE_LIMIT_PER_KEY: '-1',
      EDS_RATE_LIMIT_BURST: '0',
      EDS_RATE_LIMIT_UNAUTHENTICATED: 'lots',
      EDS_RATE_LIMIT_HOLD_MS: '-5',
      EDS_REDIS_URL: 'nonsense',
      EDS_TRUST_PROXY: '10.0.0.0/8,proxy.internal',
    }),
  );
  assert.equal(result.code, 1);
  for (const name of [
    'EDS_RATE_LIMIT_PER_KEY',
    'EDS_RATE_LIMIT_BURST',
    'EDS_RATE_LIMIT_UNAUTHENTICATED',
    'EDS_RATE_LIMIT_HOLD_MS',
    'EDS_REDIS_URL',
    'EDS_TRUST_PROXY',
  ]) {
    assert.match(result.stderr, new RegExp(`${name} must be`), name);
  }
  assert.doesNotMatch(result.stderr, /\n\s+at /);
});

test('production refuses to run without its secrets and says which are missing', async () => {
  const env = cliEnv(database, { NODE_ENV: 'production' });
  delete env.EDS_KEY_DIGEST_SECRET;
  const result = await runEds(['migrate'], env);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /EDS_KEY_DIGEST_SECRET is required when NODE_ENV=production/);
});

test('an unknown command is refused', async () => {
  const result = await runEds(['frobnicate'], cliEnv(database));
  assert.notEqual(result.code, 0);
  assert.match(result.stderr, /unknown command 'frobnicate'/);
});

test('settings come from a .env file in the working directory', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'eds-dotenv-'));
  try {
    writeFileSync(join(dir, '.env'), 'EDS_DATABASE_URL=./from-dotenv/eds.sqlite\n');
    const env = cliEnv(database);
    delete env.EDS_DATABASE_URL;
    delete env.EDS_DATA_DIR;
    const result = await runEds(['migrate'], env, dir);
    assert.equal(result.code, 0, result.stderr);
    assert.ok(existsSync(join(dir, 'from-dotenv', 'eds.sqlite')));
    assert.deepEqual(await edsJsonIn(dir, env), { migrated: [], built: [], recounted: [] });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

async function edsJsonIn(dir: string, env: Record<string, string>) {
  const result = await runEds(['migrate'], env, dir);
  return JSON.parse(result.stdout);
}

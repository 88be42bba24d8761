import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openStore, type Store } from '../../src/database/connection.js';
import { migrateToLatest } from '../../src/database/migrate.js';
import { cliEnv, edsJson, runEds } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/stores.js';

// The commands' behaviour does not depend on the store; PostgreSQL gets a smoke run in postgres.test.ts.
describe('eds migrate and eds org', () => {
  const kind = 'sqlite';
  let database: TestDatabase;
  let store: Store;
  let env: Record<string, string>;
  const orgRows = () => store.db.selectFrom('organizations').selectAll().orderBy('id').execute();

  before(async () => {
    database = await createTestDatabase(kind);
    env = cliEnv(database);
    store = openStore(database.config);
  });
  after(async () => {
    await store.close();
    await database.drop();
  });

  test('commands on an unmigrated database say to run eds migrate and create nothing', async () => {
    const result = await runEds(['org', 'create', '--name', 'Clinic A'], env);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /run `eds migrate` first/);
    assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace for an operator error');
    assert.equal(result.stdout, '');
  });

  test('migrate prints what it applied, and a second run applies nothing', async () => {
    const first = await edsJson<{ migrated: string[] }>(['migrate'], env);
    assert.ok(first.migrated.includes('001_core'));
    assert.deepEqual(await edsJson(['migrate'], env), { migrated: [], built: [], recounted: [] });
    await migrateToLatest(store.db);
  });

  test('org create defaults to not allowlisted, no routes, API keys on', async () => {
    const org = await edsJson(['org', 'create', '--name', 'Clinic A'], env);
    assert.match(String(org.organization_id), /^org_[0-9A-Za-z]{22}$/);
    assert.equal(org.name, 'Clinic A');
    assert.equal(org.allowlisted, false);
    assert.deepEqual(org.routes, []);
    assert.equal(org.api_keys_enabled, true);
    const stored = await orgRows();
    assert.equal(stored.length, 1);
    assert.equal(stored[0]!.id, org.organization_id);
  });

  test('org create takes allowlisting, routes and the API-key switch', async () => {
    const org = await edsJson(
      [
        'org',
        'create',
        '--name',
        'Clinic B',
        '--allowlisted',
        '--routes',
        'documents,encounters',
        '--api-keys',
        'off',
      ],
      env,
    );
    assert.equal(org.allowlisted, true);
    assert.deepEqual(org.routes, ['encounters', 'documents']);
    assert.equal(org.api_keys_enabled, false);
  });

  test('org update changes only what it is told and prints the organization', async () => {
    const created = await edsJson(['org', 'create', '--name', 'Clinic C', '--routes', 'encounters'], env);
    const id = String(created.organization_id);
    const updated = await edsJson(['org', 'update', id, '--allowlisted', 'true'], env);
    assert.equal(updated.allowlisted, true);
    assert.deepEqual(updated.routes, ['encounters']);
    assert.equal(updated.api_keys_enabled, true);
    const again = await edsJson(['org', 'update', id, '--routes', 'none', '--api-keys', 'off'], env);
    assert.deepEqual(again.routes, []);
    assert.equal(again.api_keys_enabled, false);
    assert.equal(again.allowlisted, true);
  });

  test('org update --rate-limit sets the organization’s own rate per key, and default clears it', async () => {
    const created = await edsJson(['org', 'create', '--name', 'Clinic D'], env);
    assert.equal(created.rate_limit_per_key, null);
    const id = String(created.organization_id);
    const limited = await edsJson(['org', 'update', id, '--rate-limit', '25'], env);
    assert.equal(limited.rate_limit_per_key, 25);
    assert.equal(limited.allowlisted, false, 'nothing else changed');
    assert.equal((await edsJson(['org', 'update', id, '--rate-limit', '0'], env)).rate_limit_per_key, 0);
    const back = await edsJson(['org', 'update', id, '--rate-limit', 'default'], env);
    assert.equal(back.rate_limit_per_key, null);
  });

  test('bad org commands fail with a clear message and change nothing', async () => {
    const before = await orgRows();
    const existing = before[0]!.id;
    const cases: [string[], RegExp][] = [
      [
        ['org', 'update', 'org_doesNotExist', '--allowlisted', 'true'],
        /organization org_doesNotExist does not exist/,
      ],
      [['org', 'update', existing], /nothing to change/],
      [['org', 'create', '--name', 'X', '--routes', 'encounters,billing'], /unknown route group billing/],
      [['org', 'create'], /required option '--name/],
      [['org', 'update', existing, '--rate-limit', 'abc'], /--rate-limit.*whole number/],
      [['org', 'update', existing, '--rate-limit', '-1'], /--rate-limit.*whole number|unknown option/],
      [['org', 'update', existing, '--allowlisted', 'true', '--rate-limit', '1.5'], /whole number/],
    ];
    // Independent failures: run side by side.
    const results = await Promise.all(cases.map(([args]) => runEds(args, env)));
    results.forEach((result, i) => {
      const [args, message] = cases[i]!;
      assert.notEqual(result.code, 0, args.join(' '));
      assert.match(result.stderr, message, args.join(' '));
      assert.equal(result.stdout, '', args.join(' '));
    });
    assert.deepEqual(await orgRows(), before);
  });
});

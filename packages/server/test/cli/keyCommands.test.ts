import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { digestToken } from '../../src/auth/digest.js';
import { isWellFormedToken } from '../../src/auth/token.js';
import type { Store } from '../../src/database/connection.js';
import { findKeyByDigest } from '../../src/store/apiKeys.js';
import { cliEnv, edsJson, runEds } from '../support/cli.js';
import { FixtureBuilder, TEST_DIGEST_SECRET } from '../support/fixtures.js';
import { createTestStore, type TestDatabase } from '../support/stores.js';

interface CreatedKey {
  key_id: string;
  token: string;
  organization_id: string;
  scopes: string[];
  kind: string;
  expires_at: string | null;
  environment: string;
}

// The commands' behaviour does not depend on the store; PostgreSQL gets a smoke run in postgres.test.ts.
describe('eds key', () => {
  const kind = 'sqlite';
  let store: Store & { database: TestDatabase };
  let env: Record<string, string>;
  let orgId: string;
  const keyRows = () => store.db.selectFrom('api_keys').selectAll().orderBy('id').execute();

  before(async () => {
    store = await createTestStore(kind);
    env = cliEnv(store.database);
    orgId = await new FixtureBuilder(store.db).organization();
  });
  after(() => store.close());

  test('key create prints the documented fields and a well-formed live token, stored only as its digest', async () => {
    const key = await edsJson<CreatedKey>(
      [
        'key',
        'create',
        '--org',
        orgId,
        '--scopes',
        'documents:read,encounters:read',
        '--expires-at',
        '2099-01-01T00:00:00+02:00',
      ],
      env,
    );
    assert.deepEqual(Object.keys(key).sort(), [
      'environment',
      'expires_at',
      'key_id',
      'kind',
      'organization_id',
      'scopes',
      'token',
    ]);
    assert.match(key.token, /^eds_live_[0-9A-Za-z]{38}$/);
    assert.ok(isWellFormedToken(key.token), 'prefix, length and CRC-32 checksum are right');
    assert.equal(key.organization_id, orgId);
    assert.deepEqual(key.scopes, ['encounters:read', 'documents:read']);
    assert.equal(key.kind, 'organization');
    assert.equal(key.expires_at, '2098-12-31T22:00:00.000Z');

    const found = await findKeyByDigest(store.db, digestToken(key.token, TEST_DIGEST_SECRET));
    assert.equal(found?.key.id, key.key_id);
    const rows = await keyRows();
    assert.ok(rows.every((row) => !JSON.stringify(row).includes(key.token)));
  });

  test('--test makes an eds_test_ key; --kind user a user key', async () => {
    const key = await edsJson<CreatedKey>(
      ['key', 'create', '--org', orgId, '--scopes', 'encounters:read', '--test', '--kind', 'user'],
      env,
    );
    assert.match(key.token, /^eds_test_/);
    assert.ok(isWellFormedToken(key.token));
    assert.equal(key.environment, 'test');
    assert.equal(key.kind, 'user');
    assert.equal(key.expires_at, null);
  });

  test('bad key create commands fail clearly and create no key', async () => {
    const before = await keyRows();
    const cases: [string[], RegExp][] = [
      [
        ['key', 'create', '--org', 'org_nope', '--scopes', 'encounters:read'],
        /organization org_nope does not exist/,
      ],
      [
        ['key', 'create', '--org', orgId, '--scopes', 'encounters:read,billing:write'],
        /unknown scope billing:write/,
      ],
      [
        [
          'key',
          'create',
          '--org',
          orgId,
          '--scopes',
          'encounters:read',
          '--expires-at',
          '2001-01-01T00:00:00Z',
        ],
        /in the past/,
      ],
      [
        ['key', 'create', '--org', orgId, '--scopes', 'encounters:read', '--expires-at', '2099-01-01'],
        /RFC 3339/,
      ],
      [
        ['key', 'create', '--org', orgId, '--scopes', 'encounters:read', '--kind', 'robot'],
        /organization or user/,
      ],
    ];
    // Independent failures: run side by side.
    const results = await Promise.all(cases.map(([args]) => runEds(args, env)));
    results.forEach((result, i) => {
      const [args, message] = cases[i]!;
      assert.notEqual(result.code, 0, args.join(' '));
      assert.match(result.stderr, message, args.join(' '));
      assert.equal(result.stdout, '', args.join(' '));
    });
    assert.deepEqual(await keyRows(), before);
  });

  test('disable, enable and revoke change the state; revoked is final; no token is ever printed again', async () => {
    const key = await edsJson<CreatedKey>(
      ['key', 'create', '--org', orgId, '--scopes', 'encounters:read'],
      env,
    );
    const disabled = await edsJson(['key', 'disable', key.key_id], env);
    assert.equal(disabled.state, 'disabled');
    assert.equal((await edsJson(['key', 'enable', key.key_id], env)).state, 'active');
    const revoked = await edsJson(['key', 'revoke', key.key_id], env);
    assert.equal(revoked.state, 'revoked');
    assert.equal(revoked.key_id, key.key_id);
    assert.equal('token' in revoked, false);

    const enable = await runEds(['key', 'enable', key.key_id], env);
    assert.equal(enable.code, 1);
    assert.match(enable.stderr, /revocation is final/);
    const row = (await keyRows()).find((r) => r.id === key.key_id);
    assert.equal(row?.state, 'revoked');

    const missing = await runEds(['key', 'revoke', 'key_nope'], env);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /API key key_nope does not exist/);

    const list = await edsJson<{ keys: Record<string, unknown>[] }>(['key', 'list', '--org', orgId], env);
    assert.ok(list.keys.some((k) => k.key_id === key.key_id && k.state === 'revoked'));
    assert.ok(list.keys.every((k) => !('token' in k) && !('digest' in k)));
    assert.equal(list.keys.length, (await keyRows()).length);
  });
  test('no plain token is anywhere in the database files', async () => {
    const tokens = [];
    for (let i = 0; i < 3; i++) {
      tokens.push(
        (await edsJson<CreatedKey>(['key', 'create', '--org', orgId, '--scopes', 'encounters:read'], env))
          .token,
      );
    }
    const path = store.database.url;
    const bytes = Buffer.concat(
      [path, `${path}-wal`].filter((p) => existsSync(p)).map((p) => readFileSync(p)),
    );
    // The search works: digests are in there.
    assert.ok(bytes.includes(digestToken(tokens[0]!, TEST_DIGEST_SECRET)));
    for (const token of tokens) {
      assert.equal(bytes.includes(token), false);
      assert.equal(bytes.includes(token.slice(9, 41)), false, 'not even the random body');
    }
  });
});

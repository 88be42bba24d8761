import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { digestToken } from '../../src/auth/digest.js';
import { openStore, type Store } from '../../src/database/connection.js';
import { findKeyByDigest } from '../../src/store/apiKeys.js';
import { exampleLines, writeBeside, writeImportFile } from '../ingest/importFiles.js';
import { cliEnv, edsJson } from '../support/cli.js';
import { TEST_DIGEST_SECRET } from '../support/fixtures.js';
import { createTestDatabase, storeKinds, type TestDatabase } from '../support/stores.js';

const skip = storeKinds().includes('postgres')
  ? false
  : 'TEST_DATABASE_URL is not set: PostgreSQL run skipped';

describe('eds against PostgreSQL', { skip }, () => {
  let database: TestDatabase;
  let store: Store;
  let env: Record<string, string>;
  before(async () => {
    database = await createTestDatabase('postgres');
    env = cliEnv(database);
    store = openStore(database.config);
  });
  after(async () => {
    await store.close();
    await database.drop();
  });

  test('migrate, org, key and import work end to end', async () => {
    assert.ok((await edsJson<{ migrated: string[] }>(['migrate'], env)).migrated.includes('001_core'));
    const org = await edsJson(
      ['org', 'create', '--name', 'PG Clinic', '--allowlisted', '--routes', 'encounters'],
      env,
    );
    const orgId = String(org.organization_id);
    const key = await edsJson<{ key_id: string; token: string }>(
      ['key', 'create', '--org', orgId, '--scopes', 'encounters:read,patients:read,documents:read'],
      env,
    );
    assert.equal(
      (await findKeyByDigest(store.db, digestToken(key.token, TEST_DIGEST_SECRET)))?.key.id,
      key.key_id,
    );
    assert.equal((await edsJson(['key', 'revoke', key.key_id], env)).state, 'revoked');

    const { lines } = exampleLines('_pg_cli');
    const file = writeImportFile([...lines].reverse());
    writeBeside(file, 'recordings/doc_2.wav', 'RIFF....WAVE');
    const imported = await edsJson<{ imported: Record<string, number> }>(['import', file], env);
    assert.equal(imported.imported.document, 2);
    assert.equal(imported.imported.transcript_ready_events, 1);
  });
});

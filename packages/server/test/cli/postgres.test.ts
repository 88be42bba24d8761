import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Migrator, sql } from 'kysely';
import pg from 'pg';
import { digestToken } from '../../src/auth/digest.js';
import { openStore, type Store } from '../../src/database/connection.js';
import { migrationProvider } from '../../src/database/migrations/index.js';
import { findKeyByDigest } from '../../src/store/apiKeys.js';
import { exampleLines, writeBeside, writeImportFile } from '../ingest/importFiles.js';
import { cliEnv, edsJson, runEds } from '../support/cli.js';
import { TEST_DIGEST_SECRET } from '../support/fixtures.js';
import { createTestDatabase, storeKinds, type TestDatabase } from '../support/stores.js';
import { waitFor } from '../support/waitFor.js';

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

describe('eds migrate against PostgreSQL', { skip }, () => {
  // The timeout an operator gave the API, or one the database itself sets for every connection.
  const timeouts: [string, (database: TestDatabase, admin: pg.Client) => Promise<Record<string, string>>][] =
    [
      ["the API's statement timeout", async () => ({ EDS_DB_STATEMENT_TIMEOUT_MS: '100' })],
      [
        "the database's own statement timeout",
        async (database, admin) => {
          const name = new URL(database.url).pathname.slice(1);
          await admin.query(`ALTER DATABASE ${name} SET statement_timeout = '100ms'`);
          return {};
        },
      ],
    ];
  for (const [timeout, applyTimeout] of timeouts) {
    test(`a migration that waits longer than ${timeout} is not cancelled`, async () => {
      const database = await createTestDatabase('postgres');
      const store = openStore(database.config);
      const holder = new pg.Client({ connectionString: database.url });
      try {
        const migrator = new Migrator({ db: store.db, provider: migrationProvider });
        assert.equal((await migrator.migrateTo('012_webhook_endpoint_health')).error, undefined);
        // 013 reads the encounters under a share lock: held up here, as by a long import.
        await holder.connect();
        const extraEnv = await applyTimeout(database, holder);
        await holder.query('BEGIN');
        await holder.query('LOCK TABLE encounters IN ACCESS EXCLUSIVE MODE');

        const migrating = runEds(['migrate'], cliEnv(database, extraEnv));
        let exited = false;
        void migrating.then(() => {
          exited = true;
        });
        // Read outside the lock holder's transaction, which sees one snapshot of the activity.
        const waitedPastTimeout = async () => {
          const { rows } = await sql`select 1 from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock'
              and clock_timestamp() - query_start > interval '1 second'`.execute(store.db);
          return rows.length > 0;
        };
        await waitFor(async () => exited || (await waitedPastTimeout()), 'eds migrate waiting on the lock');
        await holder.query('COMMIT');

        const result = await migrating;
        assert.equal(result.code, 0, result.stderr);
        assert.deepEqual(JSON.parse(result.stdout).migrated, ['013_encounter_hour_counts']);
      } finally {
        await holder.end();
        await store.close();
        await database.drop();
      }
    });
  }
});

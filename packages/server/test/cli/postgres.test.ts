import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Migrator, sql } from 'kysely';
import pg from 'pg';
import { digestToken } from '../../src/auth/digest.js';
import { openStore, type Store } from '../../src/database/connection.js';
import { migrationProvider } from '../../src/database/migrations/index.js';
import { findKeyByDigest } from '../../src/store/apiKeys.js';
import { upsertPatients } from '../../src/store/clinicalWrites.js';
import { upsertOrganization } from '../../src/store/organizations.js';
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
        assert.deepEqual(JSON.parse(result.stdout).migrated, [
          '013_encounter_hour_counts',
          '014_encounter_day_running_counts',
          '015_change_signals',
        ]);
      } finally {
        await holder.end();
        await store.close();
        await database.drop();
      }
    });
  }

  test("a migration that rewrites a table leaves its index answering without visits to the table's rows", async () => {
    const database = await createTestDatabase('postgres');
    const store = openStore(database.config);
    try {
      const migrator = new Migrator({ db: store.db, provider: migrationProvider });
      assert.equal((await migrator.migrateTo('013_encounter_hour_counts')).error, undefined);
      // An encounter at noon on each of 400 days, with its counts, as the release before kept them.
      const at = new Date('2026-01-01T00:00:00Z').getTime();
      await upsertOrganization(store.db, {
        id: 'org_a',
        name: 'A',
        allowlisted: true,
        routes: ['encounters'],
        apiKeysEnabled: true,
        createdAt: at,
        updatedAt: at,
      });
      await upsertPatients(store.db, [
        {
          id: 'pat_a',
          organization_id: 'org_a',
          first_name: 'Ana',
          last_name: 'Silva',
          date_of_birth: '1980-02-29',
          created_at: at,
          updated_at: at,
        },
      ]);
      const days = sql`generate_series(20000, 20399) as day`;
      await sql`insert into encounters (id, organization_id, patient_id, encounter_type, status,
          date_of_service, created_at, updated_at, demo_training)
        select 'enc_' || day, 'org_a', 'pat_a', 'ambient', 'completed', day * 86400000::bigint,
          day * 86400000::bigint + 43200000, day * 86400000::bigint + 43200000, 0 from ${days}`.execute(
        store.db,
      );
      await sql`insert into encounter_day_counts (organization_id, day, count) select 'org_a', day, 1 from ${days}`.execute(
        store.db,
      );
      await sql`insert into encounter_hour_counts (organization_id, hour, count)
        select 'org_a', day * 24 + 12, 1 from ${days}`.execute(store.db);
      await sql`insert into encounter_counts (organization_id, count) values ('org_a', 400)`.execute(
        store.db,
      );
      await sql`VACUUM encounter_day_counts`.execute(store.db);

      // 014 gives every day row its running total: every row is rewritten.
      const result = await runEds(['migrate'], cliEnv(database));
      assert.equal(result.code, 0, result.stderr);
      const upgrade = JSON.parse(result.stdout);
      assert.deepEqual(upgrade.migrated, ['014_encounter_day_running_counts', '015_change_signals']);
      assert.deepEqual(upgrade.recounted, [], 'the counts agreed: only the migration rewrote them');

      const plan = await store.db.connection().execute(async (connection) => {
        await sql`SET enable_seqscan = off`.execute(connection);
        const { rows } = await sql<{ 'QUERY PLAN': string }>`EXPLAIN (ANALYZE, COSTS OFF)
          select day from encounter_day_counts where organization_id = 'org_a' and earlier <= 200
          order by earlier desc, day desc limit 1`.execute(connection);
        return rows.map((row) => row['QUERY PLAN']).join('\n');
      });
      assert.match(plan, /Index Only Scan Backward using encounter_day_counts_earlier/, plan);
      assert.match(plan, /\(actual [^)]*rows=1 loops=1\)/, plan);
      assert.match(plan, /Heap Fetches: 0\b/, plan);
    } finally {
      await store.close();
      await database.drop();
    }
  });
});

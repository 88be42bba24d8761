import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import type { Store } from '../../src/database/connection.js';
import { LoadStatistics } from '../../src/database/plannerStatistics.js';
import { createLogger } from '../../src/logger.js';
import { FixtureBuilder } from '../support/fixtures.js';
import { createTestStore, storeKinds } from '../support/stores.js';

/** What the planner takes the table's row count to be: -1 until an ANALYZE (or VACUUM) ran. */
async function plannedRows(store: Store, table: string): Promise<number> {
  const { rows } = await sql<{ reltuples: number }>`
    SELECT reltuples::float8 AS reltuples FROM pg_class WHERE relname = ${table}`.execute(store.db);
  return Number(rows[0]!.reltuples);
}

/** A real logger whose warnings' messages are kept. */
function recordingLogger() {
  const warnings: string[] = [];
  const logger = createLogger('warn', { write: (line: string) => void warnings.push(JSON.parse(line).msg) });
  return Object.assign(logger, { warnings });
}

describe('planner statistics during a load written in many transactions', {
  skip: storeKinds().includes('postgres') ? false : 'TEST_DATABASE_URL is not set: PostgreSQL run skipped',
}, () => {
  let store: Store & { close(): Promise<void> };
  let fixtures: FixtureBuilder;

  before(async () => {
    store = await createTestStore('postgres');
    fixtures = new FixtureBuilder(store.db);
  });
  after(() => store.close());

  async function commitOrganizations(statistics: LoadStatistics, count: number): Promise<void> {
    for (let i = 0; i < count; i++) await fixtures.organization();
    await statistics.committed(count);
  }

  test('the loaded tables are analyzed once the rows reach the first mark, then each time the rows written double', async () => {
    const logger = recordingLogger();
    const statistics = new LoadStatistics(store, logger, 100);

    await commitOrganizations(statistics, 60);
    assert.equal(await plannedRows(store, 'organizations'), -1, 'below the first mark: not analyzed');
    await commitOrganizations(statistics, 60);
    assert.equal(await plannedRows(store, 'organizations'), 120, 'analyzed at 120 rows written');
    assert.notEqual(
      await plannedRows(store, 'encounter_reads'),
      -1,
      'the read model is analyzed with the rest',
    );

    await commitOrganizations(statistics, 60);
    assert.equal(await plannedRows(store, 'organizations'), 120, 'next analyze at 240 rows, not before');
    await commitOrganizations(statistics, 60);
    assert.equal(await plannedRows(store, 'organizations'), 240);
    assert.deepEqual(logger.warnings, []);
  });

  test('an analyze that fails is logged and the load goes on', async () => {
    const logger = recordingLogger();
    const statistics = new LoadStatistics(store, logger, 1);
    await sql`DROP TABLE document_reads`.execute(store.db);
    await statistics.committed(1);
    assert.deepEqual(logger.warnings, [
      'could not refresh planner statistics during the load; the load goes on',
    ]);
    // The statement timeout was put back on the connection that ran it.
    const { rows } = await sql<{ statement_timeout: string }>`SHOW statement_timeout`.execute(store.db);
    assert.notEqual(rows[0]!.statement_timeout, '0');
  });
});

describe('planner statistics during a load on SQLite', () => {
  test('nothing is analyzed while loading: SQLite plans these reads by their indexes', async () => {
    const store = await createTestStore('sqlite');
    try {
      const statistics = new LoadStatistics(store, recordingLogger(), 1);
      await new FixtureBuilder(store.db).organization();
      await statistics.committed(10);
      const { rows } = await sql<{ name: string }>`
        SELECT name FROM sqlite_master WHERE name = 'sqlite_stat1'`.execute(store.db);
      assert.deepEqual(rows, []);
    } finally {
      await store.close();
    }
  });
});

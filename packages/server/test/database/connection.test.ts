import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { openStore } from '../../src/database/connection.js';
import { createTestDatabase, storeKinds } from '../support/stores.js';

const skip = storeKinds().includes('postgres')
  ? false
  : 'TEST_DATABASE_URL is not set: PostgreSQL run skipped';

test("happy: a store opened with no statement timeout runs every client's first statement with none, though the database sets one, and pg warns of nothing", {
  skip,
}, async () => {
  const database = await createTestDatabase('postgres');
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  await admin.query(
    `ALTER DATABASE ${new URL(database.url).pathname.slice(1)} SET statement_timeout = '50ms'`,
  );
  await admin.end();
  const warnings: string[] = [];
  // pg's own, when a client is given a statement while it runs another.
  const onWarning = (warning: Error) => {
    if (/already executing a query/.test(warning.message)) warnings.push(warning.message);
  };
  process.on('warning', onWarning);
  const store = openStore({ dialect: 'postgres', url: database.url, poolSize: 3, statementTimeoutMs: 0 });
  try {
    // More statements at once than the pool has clients: each new client's first statement is one
    // of them, and the rest wait for a client.
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        store.pgPool!.query<{ statement_timeout: string }>(
          'select pg_sleep(0.1), current_setting($1) as statement_timeout',
          ['statement_timeout'],
        ),
      ),
    );
    assert.deepEqual(
      answers.map(({ rows }) => rows[0]!.statement_timeout),
      Array(6).fill('0'),
    );
    // Warnings are emitted on the next turn of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(warnings, []);
  } finally {
    process.off('warning', onWarning);
    await store.close();
    await database.drop();
  }
});

/**
 * SQLite write transactions take the write lock when they begin. The API process shares its
 * database file with the audit writer thread (and an `eds import` may run beside it): a
 * transaction that read before another connection committed must still commit, not fail with
 * SQLITE_BUSY_SNAPSHOT (which busy_timeout does not retry).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { openStore, type Store } from '../../src/database/connection.js';
import { migrateToLatest } from '../../src/database/migrate.js';
import { createTestDatabase, type TestDatabase } from '../support/stores.js';

let database: TestDatabase;
let store: Store;
let other: SQLite.Database;

before(async () => {
  database = await createTestDatabase('sqlite');
  store = openStore(database.config);
  await migrateToLatest(store.db);
  await sql`CREATE TABLE counter (n INTEGER NOT NULL)`.execute(store.db);
  await sql`INSERT INTO counter (n) VALUES (0)`.execute(store.db);
  other = new SQLite(database.url);
  other.pragma('busy_timeout = 0');
});

after(async () => {
  other.close();
  await store.close();
  await database.drop();
});

test('happy: a transaction that read first commits although another connection tried to write meanwhile', async () => {
  let otherWrote = false;
  await store.db.transaction().execute(async (tx) => {
    const { rows } = await sql<{ n: number }>`SELECT n FROM counter`.execute(tx);
    try {
      other.prepare('UPDATE counter SET n = n + 100').run();
      otherWrote = true;
    } catch (error) {
      // The other writer must wait for this transaction: SQLITE_BUSY, its own retry to make.
      assert.equal((error as { code?: string }).code, 'SQLITE_BUSY');
    }
    await sql`UPDATE counter SET n = ${(rows[0]?.n ?? 0) + 1}`.execute(tx);
  });
  assert.equal(otherWrote, false, 'another connection wrote inside a write transaction');
  const { rows } = await sql<{ n: number }>`SELECT n FROM counter`.execute(store.db);
  assert.equal(rows[0]?.n, 1);
});

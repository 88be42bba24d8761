/**
 * SQLite only (PostgreSQL has no WAL checkpoints in the serving process): the serving process's
 * connection never checkpoints inside a COMMIT; a worker thread copies the WAL into the database
 * file instead.
 */
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { after, before, test } from 'node:test';
import type { Store } from '../../src/database/connection.js';
import { startWalCheckpointer } from '../../src/database/walCheckpointer.js';
import { createTestStore, type TestDatabase } from '../support/stores.js';

let store: Store & { database: TestDatabase };
before(async () => {
  store = await createTestStore('sqlite');
});
after(() => store.close());

test('happy: writes reach the database file through the worker thread, not through COMMIT', async () => {
  const sqlite = store.sqlite!;
  const path = store.database.config.dialect === 'sqlite' ? store.database.config.path : '';
  const errors: string[] = [];
  const checkpointer = startWalCheckpointer(sqlite, 10, (m) => errors.push(m))!;
  assert.equal(sqlite.pragma('wal_autocheckpoint', { simple: true }), 0);
  const sizeBefore = statSync(path).size;
  const insert = sqlite.prepare(
    'INSERT INTO audit_log (at, request_id, method, route, status, duration_ms) VALUES (?, ?, ?, ?, ?, ?)',
  );
  for (let i = 0; i < 5000; i++)
    insert.run(i, `req_${i}_${'x'.repeat(200)}`, 'GET', 'listEncounters', 200, 1);
  while (statSync(path).size <= sizeBefore + 500_000) await new Promise((r) => setTimeout(r, 20));
  await checkpointer.stop();
  assert.deepEqual(errors, []);
  assert.equal(sqlite.pragma('wal_autocheckpoint', { simple: true }), 1000, 'ordinary checkpoints again');
});

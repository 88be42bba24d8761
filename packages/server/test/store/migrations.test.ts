import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { migrateToLatest, migrationsCurrent, type Store } from '../../src/store/database.js';
import { createUnmigratedStore, forEachStore } from '../support/stores.js';

forEachStore('migrations', (kind) => {
  let store: Store;
  before(async () => {
    store = await createUnmigratedStore(kind);
  });
  // close() also drops the test database.
  after(() => store.close());

  test('a fresh database is not current, then migrates, then a second run applies nothing', async () => {
    assert.equal(await migrationsCurrent(store.db), false);
    const first = await migrateToLatest(store.db);
    assert.ok(first.includes('001_core'));
    assert.equal(await migrationsCurrent(store.db), true);
    assert.deepEqual(await migrateToLatest(store.db), []);
  });

  test('the audit log hands out increasing ids on both dialects', async () => {
    const row = { at: 1, request_id: 'req_a', method: 'GET', route: 'x', status: 200, duration_ms: 1 };
    await store.db
      .insertInto('audit_log')
      .values([row, { ...row, request_id: 'req_b' }])
      .execute();
    const ids = (await store.db.selectFrom('audit_log').select('id').orderBy('id').execute()).map(
      (r) => r.id,
    );
    assert.equal(ids.length, 2);
    assert.equal(typeof ids[0], 'number');
    assert.ok(ids[1]! > ids[0]!);
  });
});

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Migrator } from 'kysely';
import type { Store } from '../../src/database/connection.js';
import { migrateToLatest, migrationsCurrent } from '../../src/database/migrate.js';
import { migrationProvider } from '../../src/database/migrations/index.js';
import { upgradeStore } from '../../src/upgradeStore.js';
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

forEachStore('upgrading from each migration', (kind) => {
  test('a database left at any migration upgrades to the latest, read model included', async () => {
    const names = Object.keys(await migrationProvider.getMigrations());
    for (const name of names) {
      const store = await createUnmigratedStore(kind);
      try {
        const { error } = await new Migrator({ db: store.db, provider: migrationProvider }).migrateTo(name);
        assert.equal(error, undefined, name);
        const upgrade = await upgradeStore(store.db);
        assert.deepEqual(upgrade.migrated, names.slice(names.indexOf(name) + 1), name);
        assert.equal(await migrationsCurrent(store.db), true, name);
        assert.deepEqual(await upgradeStore(store.db), { migrated: [], built: [], recounted: [] }, name);
      } finally {
        await store.close();
      }
    }
  });
});

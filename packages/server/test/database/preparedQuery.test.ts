/**
 * Prepared reads: compiled once, run with new values; on SQLite run directly on the connection
 * unless a transaction holds it, in which case they wait for it like any Kysely query.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Store } from '../../src/database/connection.js';
import { preparedQuery } from '../../src/database/preparedQuery.js';
import { unplannedText } from '../../src/database/unplannedValue.js';
import { createTestStore, forEachStore, type TestDatabase } from '../support/stores.js';

const organizationById = preparedQuery((db, id: string) =>
  db.selectFrom('organizations').select(['id', 'name']).where('id', '=', unplannedText(db, id)),
);

function organization(id: string) {
  return {
    id,
    name: `Org ${id}`,
    allowlisted: 1 as const,
    routes: '[]',
    api_keys_enabled: 1 as const,
    created_at: 1,
    updated_at: 1,
  };
}

forEachStore('prepared queries', (kind) => {
  let store: Store & { database: TestDatabase };
  before(async () => {
    store = await createTestStore(kind);
  });
  // close() also drops the test database.
  after(() => store.close());

  test('happy: one compiled query answers for each new value', async () => {
    await store.db
      .insertInto('organizations')
      .values([organization('org_p1'), organization('org_p2')])
      .execute();
    assert.deepEqual(await organizationById(store.db, 'org_p1'), [{ id: 'org_p1', name: 'Org org_p1' }]);
    assert.deepEqual(await organizationById(store.db, 'org_p2'), [{ id: 'org_p2', name: 'Org org_p2' }]);
    assert.deepEqual(await organizationById(store.db, 'org_none'), []);
  });

  test('error: a query selecting * is refused, so no migration can reshape a prepared statement', async () => {
    const everything = preparedQuery((db, id: string) =>
      db.selectFrom('organizations').selectAll().where('id', '=', id),
    );
    await assert.rejects(everything(store.db, 'org_p1'), /name every column/);
  });

  test('error: on SQLite a read that leaves the planner a bare value or limit is refused; PostgreSQL runs it', async () => {
    const bareValue = preparedQuery((db, id: string) =>
      db.selectFrom('organizations').select(['id', 'name']).where('id', '=', id),
    );
    const bareLimit = preparedQuery((db, id: string, limit: number) =>
      db
        .selectFrom('organizations')
        .select(['id', 'name'])
        .where('id', '=', unplannedText(db, id))
        .limit(limit),
    );
    const expected = [{ id: 'org_p1', name: 'Org org_p1' }];
    for (const read of [() => bareValue(store.db, 'org_p1'), () => bareLimit(store.db, 'org_p1', 1)]) {
      if (kind === 'sqlite') await assert.rejects(read(), /unplannedInteger or unplannedText/);
      else assert.deepEqual(await read(), expected);
    }
  });

  test('security: a read started while a transaction holds the connection never sees its uncommitted rows', async () => {
    let read: Promise<unknown[]> | undefined;
    await assert.rejects(
      store.db.transaction().execute(async (tx) => {
        await tx.insertInto('organizations').values(organization('org_uncommitted')).execute();
        read = organizationById(store.db, 'org_uncommitted');
        // Another statement on the transaction: a read that could run now has run by its end (it
        // must not, on the transaction's connection).
        await tx.selectFrom('organizations').select('id').execute();
        throw new Error('roll back');
      }),
      /roll back/,
    );
    assert.deepEqual(await read, [], 'the rolled-back row was never visible outside its transaction');
    assert.deepEqual(await organizationById(store.db, 'org_uncommitted'), []);
  });

  test('happy: inside a transaction a prepared read sees that transaction’s own rows', async () => {
    await store.db.transaction().execute(async (tx) => {
      await tx.insertInto('organizations').values(organization('org_in_tx')).execute();
      assert.equal((await organizationById(tx, 'org_in_tx')).length, 1);
    });
  });
});

/**
 * Read snapshots on SQLite: the API's prepared reads of one turn of the event loop share one read
 * transaction, which ends with the turn, and a write of the same process ends it at once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  endReadSnapshot,
  openStore,
  readThroughSnapshots,
  type Store,
} from '../../src/database/connection.js';
import { preparedQuery } from '../../src/database/preparedQuery.js';
import { unplannedText } from '../../src/database/unplannedValue.js';
import { createTestStore, type TestDatabase } from '../support/stores.js';

const organizationName = preparedQuery((db, id: string) =>
  db.selectFrom('organizations').select(['name']).where('id', '=', unplannedText(db, id)),
);

function organization(id: string, name: string) {
  return {
    id,
    name,
    allowlisted: 1 as const,
    routes: '[]',
    api_keys_enabled: 1 as const,
    created_at: 1,
    updated_at: 1,
  };
}

async function nameOf(store: Store, id: string): Promise<string | undefined> {
  return (await organizationName(store.db, id))[0]?.name;
}

/** Stores the organization, then reads it in a new turn: that turn's snapshot is open after. */
async function storedAndRead(store: Store, id: string, name: string): Promise<void> {
  await store.db.insertInto('organizations').values(organization(id, name)).execute();
  await nextTurn();
  assert.equal(await nameOf(store, id), name);
}

describe('read snapshots [sqlite]', () => {
  let store: Store & { database: TestDatabase };
  /** Another process's connection to the same file. */
  let other: Store;
  before(async () => {
    store = await createTestStore('sqlite');
    readThroughSnapshots(store);
    other = openStore(store.database.config);
  });
  after(async () => {
    await other.close();
    await store.close();
  });

  test("another connection's commit is seen from the next turn on, not within the turn that read before it", async () => {
    await storedAndRead(store, 'org_s1', 'before');
    await other.db.updateTable('organizations').set({ name: 'after' }).where('id', '=', 'org_s1').execute();
    // Same turn: the reads share the snapshot the first one began.
    assert.equal(await nameOf(store, 'org_s1'), 'before');
    await nextTurn();
    assert.equal(await nameOf(store, 'org_s1'), 'after');
  });

  test("this process's own write through Kysely is seen by its next read, in the same turn", async () => {
    await storedAndRead(store, 'org_s2', 'first');
    await store.db.updateTable('organizations').set({ name: 'second' }).where('id', '=', 'org_s2').execute();
    assert.equal(await nameOf(store, 'org_s2'), 'second');
    await store.db.transaction().execute(async (tx) => {
      await tx.updateTable('organizations').set({ name: 'third' }).where('id', '=', 'org_s2').execute();
    });
    assert.equal(await nameOf(store, 'org_s2'), 'third');
  });

  test('a write on the raw connection is seen once it ends the snapshot', async () => {
    await storedAndRead(store, 'org_s3', 'kept');
    // As a bulk writer does, through the connection itself; seen here only because the snapshot
    // the read above began is ended (the statement is not Kysely's).
    const raw = store.sqlite!;
    raw.prepare("UPDATE organizations SET name = 'raw' WHERE id = 'org_s3'").run();
    endReadSnapshot(store.db);
    assert.equal(await nameOf(store, 'org_s3'), 'raw');
  });
});

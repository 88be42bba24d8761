/**
 * What a process notices of other processes' commits: a change signalled on its channel, from
 * inside the transaction that makes it, and nothing else. On SQLite the audit writer commits
 * every 0.5-1.5 ms under load; a watch that fired on any commit cleared the key cache
 * and woke the delivery workers on every poll.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, mock, test } from 'node:test';
import { sql } from 'kysely';
import { type CommitWatch, signalCommit, watchCommits } from '../../src/database/commitWatch.js';
import { openStore, type Store } from '../../src/database/connection.js';
import { setApiKeyState } from '../../src/store/apiKeys.js';
import { watchAuthChanges } from '../../src/store/authChanges.js';
import { updateOrganizationSettings } from '../../src/store/organizations.js';
import { announceDeliveryWork, watchDeliveryWork } from '../../src/webhooks/wake.js';
import { FixtureBuilder } from '../support/fixtures.js';
import { createTestStore, forEachStore, type TestDatabase } from '../support/stores.js';
import { waitFor } from '../support/waitFor.js';

const POLL_MS = 250;

forEachStore('commit watch', (kind) => {
  let store: Store & { database: TestDatabase; close(): Promise<void> };
  let other: Store;
  let watch: CommitWatch | undefined;
  before(async () => {
    store = await createTestStore(kind);
    other = openStore(store.database.config);
    await sql`create table unrelated_writes (x integer)`.execute(other.db);
  });
  afterEach(async () => {
    await watch?.stop();
    watch = undefined;
    mock.timers.reset();
  });
  after(async () => {
    await other.close();
    await store.close();
  });

  const signal = (channel: string) => other.db.transaction().execute((tx) => signalCommit(tx, channel));
  // PostgreSQL's NOTIFY is per channel by construction; what these check is SQLite's polled counter.
  const sqliteOnly = kind === 'postgres' && "a check of SQLite's polled counter";
  const unrelatedCommit = () => sql`insert into unrelated_writes (x) values (1)`.execute(other.db);

  /** Starts a watch on mocked timers: `poll()` runs one poll and says how many changes it has seen. */
  function polled(start: (onChange: () => void) => CommitWatch) {
    mock.timers.enable({ apis: ['setInterval'] });
    let changes = 0;
    watch = start(() => changes++);
    return () => {
      mock.timers.tick(POLL_MS);
      return changes;
    };
  }

  test('a change signalled on the channel by another connection is noticed once it commits', async () => {
    let changes = 0;
    watch = watchCommits(
      store,
      kind === 'postgres' ? store.database.url : undefined,
      'test_one',
      () => changes++,
      10,
    );
    // PostgreSQL reports a change when its LISTEN connection (re)connects: notices may have been missed.
    if (kind === 'postgres') await waitFor(() => changes === 1, 'the LISTEN connection');
    const before = changes;
    await signal('test_one');
    await waitFor(() => changes === before + 1, 'the signalled change');
  });

  test('commits that signal nothing, or another channel, are not changes', {
    skip: sqliteOnly,
  }, async () => {
    const poll = polled((onChange) => watchCommits(store, undefined, 'test_two', onChange, POLL_MS));
    await unrelatedCommit();
    assert.equal(poll(), 0);
    await signal('another_channel');
    assert.equal(poll(), 0);
    await signal('test_two');
    assert.equal(poll(), 1);
    await signal('test_two');
    await signal('test_two');
    assert.equal(poll(), 2, 'two signals between polls are one change');
    assert.equal(poll(), 2);
  });

  test('a key or an organization changed by another connection is an authentication change', {
    skip: sqliteOnly,
  }, async () => {
    const fixtures = new FixtureBuilder(other.db);
    const org = await fixtures.organization();
    const key = await fixtures.key(org);
    const poll = polled((onChange) => watchAuthChanges(store, undefined, onChange, POLL_MS));
    await setApiKeyState(other.db, key.id, 'disabled', Date.now());
    assert.equal(poll(), 1);
    await updateOrganizationSettings(other.db, org, { allowlisted: false }, Date.now());
    assert.equal(poll(), 2);
  });

  test('delivery work announced by another connection wakes the delivery watch', {
    skip: sqliteOnly,
  }, async () => {
    const poll = polled((onWork) => watchDeliveryWork(store, undefined, onWork, POLL_MS));
    await other.db.transaction().execute((tx) => announceDeliveryWork(tx));
    assert.equal(poll(), 1);
  });

  test('a transaction that signalled and rolled back is no change', { skip: sqliteOnly }, async () => {
    const poll = polled((onChange) => watchCommits(store, undefined, 'test_three', onChange, POLL_MS));
    await assert.rejects(
      other.db.transaction().execute(async (tx) => {
        await signalCommit(tx, 'test_three');
        throw new Error('rolled back');
      }),
      /rolled back/,
    );
    assert.equal(poll(), 0);
  });

  test("a signal this process's own transaction has not committed is read once it has", {
    skip: sqliteOnly,
  }, async () => {
    const poll = polled((onChange) => watchCommits(store, undefined, 'test_four', onChange, POLL_MS));
    let commit: () => void = () => {};
    const committing = new Promise<void>((resolve) => {
      commit = resolve;
    });
    let signalled: () => void = () => {};
    const inside = new Promise<void>((resolve) => {
      signalled = resolve;
    });
    const transaction = store.db.transaction().execute(async (tx) => {
      await signalCommit(tx, 'test_four');
      signalled();
      await committing;
    });
    await inside;
    assert.equal(poll(), 0, 'not read inside the transaction, which may still roll back');
    commit();
    await transaction;
    assert.equal(poll(), 1);
  });
});

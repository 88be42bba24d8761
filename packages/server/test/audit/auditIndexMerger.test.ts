/**
 * On PostgreSQL the audit's per-patient index takes new patient sets into a pending list; the
 * merger empties it from its own connection, so audit commits do not. A serving role that may not
 * merge it is told how to fix that.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { AuditIndexMerger } from '../../src/audit/auditIndexMerger.js';
import { openStore, type Store } from '../../src/database/connection.js';
import { createLogger } from '../../src/logger.js';
import { startTestServer } from '../support/server.js';
import { createTestStore, storeKinds, type TestDatabase } from '../support/stores.js';
import { waitFor } from '../support/waitFor.js';

const skip = storeKinds().includes('postgres')
  ? false
  : 'TEST_DATABASE_URL is not set: PostgreSQL run skipped';

describe("the audit index's pending list on PostgreSQL", { skip }, () => {
  let store: Store & { database: TestDatabase };
  before(async () => {
    store = await createTestStore('postgres');
    // pgstattuple reads the pending list's size; the service itself does not need it.
    await sql`create extension if not exists pgstattuple`.execute(store.db);
  });
  after(() => store.close());

  async function pendingPages(): Promise<number> {
    const { rows } = await sql<{ pending_pages: number }>`select pending_pages
      from pgstatginindex('audit_patient_sets_members')`.execute(store.db);
    return Number(rows[0]!.pending_pages);
  }

  async function addPatientSets(count: number): Promise<void> {
    const rows = Array.from({ length: count }, () => ({
      set_id: randomBytes(16).toString('base64url'),
      members: JSON.stringify(
        Array.from({ length: 50 }, () => `pat_${randomBytes(16).toString('base64url')}`),
      ),
      last_used_at: Date.now(),
    }));
    await store.db.insertInto('audit_patient_sets').values(rows).execute();
  }

  test('new patient sets wait in the pending list until the merger merges them', async () => {
    await addPatientSets(200);
    assert.ok((await pendingPages()) > 0, 'new sets go to the pending list');

    const merger = new AuditIndexMerger(openStore(store.database.config), createLogger('silent'), 1);
    merger.start();
    try {
      await waitFor(async () => (await pendingPages()) === 0, 'an empty pending list');
      await addPatientSets(200);
      await waitFor(async () => (await pendingPages()) === 0, 'an empty pending list after more sets');
    } finally {
      await merger.close();
    }
  });

  test('the serving process merges the pending list that new patient sets fill', async () => {
    await addPatientSets(200);
    assert.ok((await pendingPages()) > 0, 'new sets go to the pending list');
    const server = await startTestServer('postgres', { database: store.database });
    try {
      await waitFor(async () => (await pendingPages()) === 0, 'an empty pending list');
    } finally {
      await server.close();
    }
  });

  /** A merger on the test database, as `url` changed by `change`, and the warnings it logs. */
  function mergerAt(change: (url: URL) => void, giveWaysBeforeWarning?: number) {
    const url = new URL(store.database.url);
    change(url);
    const warnings: { msg: string; err?: { code?: string } }[] = [];
    const logger = createLogger('warn', { write: (line: string) => void warnings.push(JSON.parse(line)) });
    const config = { dialect: 'postgres', url: url.toString(), poolSize: 1, statementTimeoutMs: 0 } as const;
    return {
      merger: new AuditIndexMerger(openStore(config), logger, 250, giveWaysBeforeWarning),
      warnings,
    };
  }

  test('a serving role that does not own the audit tables is told how to fix it', async () => {
    const role = `eds_not_owner_${randomBytes(4).toString('hex')}`;
    await sql`create role ${sql.id(role)}`.execute(store.db);
    // Connected as the test's user, acting as the role: no password of its own needed.
    const { merger, warnings } = mergerAt((url) => url.searchParams.set('options', `-c role=${role}`));
    try {
      assert.equal(await merger.mergeOnce(), 0);
      assert.equal(warnings.length, 1);
      assert.equal(warnings[0]!.err?.code, '42501');
      assert.match(warnings[0]!.msg, /does not own audit_patient_sets/);
      assert.match(warnings[0]!.msg, /make this role its owner, or set EDS_AUDIT_INDEX_MERGE_MS=0/);
    } finally {
      await merger.close();
      await sql`drop role ${sql.id(role)}`.execute(store.db);
    }
  });

  // Without the lock timeout the merge would wait as long as the lock is held: fail, not hang.
  test('a merge held up by a lock on the index gives way, warns once if the lock stays, and merges again once it is free', {
    timeout: 60_000,
  }, async () => {
    const { merger, warnings } = mergerAt(() => {}, 3);
    const holder = openStore(store.database.config);
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked: () => void = () => {};
    const lockHeld = new Promise<void>((resolve) => {
      locked = resolve;
    });
    // As an operator's REINDEX or VACUUM FULL holds it: a merge that waited for it would hold up
    // the process's stop for as long.
    const holding = holder.db.transaction().execute(async (tx) => {
      await sql`reindex index audit_patient_sets_members`.execute(tx);
      locked();
      await released;
    });
    try {
      // A REINDEX that failed would never hold the lock: fail with its error instead.
      await Promise.race([lockHeld, holding]);
      assert.equal(await merger.mergeOnce(), 0);
      assert.equal(await merger.mergeOnce(), 0);
      assert.equal(warnings.length, 0, 'a lock held for a while is not a fault');
      assert.equal(await merger.mergeOnce(), 0);
      assert.equal(await merger.mergeOnce(), 0);
      assert.equal(warnings.length, 1, 'a lock that stays is reported once');
      assert.equal(warnings[0]!.err?.code, '55P03');
      assert.match(warnings[0]!.msg, /a lock on audit_patient_sets_members is held/);
      release();
      await holding;
      await addPatientSets(200);
      assert.ok((await merger.mergeOnce()) > 0, 'the next merge merges');
      assert.equal(warnings.length, 1);
    } finally {
      release();
      await holding;
      await holder.close();
      await merger.close();
    }
  });

  test('a database it cannot reach is reported once, not at every merge', async () => {
    const { merger, warnings } = mergerAt((url) => {
      url.pathname = `/${url.pathname.slice(1)}_absent`;
    });
    try {
      assert.equal(await merger.mergeOnce(), 0);
      assert.equal(await merger.mergeOnce(), 0);
      assert.equal(warnings.length, 1);
      assert.equal(warnings[0]!.err?.code, '3D000');
      assert.match(warnings[0]!.msg, /could not merge the audit index's pending list; retrying/);
    } finally {
      await merger.close();
    }
  });
});

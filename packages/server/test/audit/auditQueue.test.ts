/**
 * The audit queue writes in slices; a slice that fails goes back in front with everything after
 * it, so a store that fails mid-flush loses no record and stores none twice. Refusals that
 * identified no key are folded per flush window, with exact counts.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import pino from 'pino';
import { AuditQueue } from '../../src/audit/auditQueue.js';
import { KyselyAuditWriter } from '../../src/audit/auditWriter.js';
import type { Store } from '../../src/database/connection.js';
import type { AuditInsert } from '../../src/database/schema.js';
import { allowAll, record, refuseRequestId } from '../support/auditRecords.js';
import { createTestStore, forEachStore, type TestDatabase } from '../support/stores.js';

forEachStore('audit queue', (kind) => {
  let store: Store & { database: TestDatabase };
  before(async () => {
    store = await createTestStore(kind);
  });
  // close() also drops the test database.
  after(() => store.close());

  /** A queue whose flush window lasts the whole test: folding is counted per window. */
  const oneWindowQueue = () =>
    new AuditQueue({
      writer: new KyselyAuditWriter(store),
      flushIntervalMs: 60_000,
      batchSize: 10_000,
      logger: pino({ level: 'silent' }),
    });

  test('error: a store failing mid-flush loses nothing and stores nothing twice once it is back', async () => {
    const queue = new AuditQueue({
      writer: new KyselyAuditWriter(store),
      flushIntervalMs: 60_000,
      batchSize: 10_000,
      sliceSize: 50,
      logger: pino({ level: 'silent' }),
    });
    for (let i = 0; i < 120; i++) queue.push(record(i));
    await queue.flush();
    // The store refuses record 180: slices 120-169, 170-219 and 220-229 follow; the first is
    // stored, the second fails, and it and the third wait.
    await refuseRequestId(store, record(180).request_id);
    for (let i = 120; i < 230; i++) queue.push(record(i));
    await queue.flush();
    assert.equal(queue.depth, 60, 'the failed slice and the one after it are kept');
    await allowAll(store);
    await queue.flush();
    assert.equal(queue.depth, 0);
    const rows = await store.db.selectFrom('audit_log').select('request_id').orderBy('at').execute();
    assert.deepEqual(
      rows.map((r) => r.request_id),
      Array.from({ length: 230 }, (_, i) => record(i).request_id),
    );
    await queue.close();
  });

  test('happy: refusals naming no key fold into one row per route, status and reason with exact counts', async () => {
    await sql`DELETE FROM audit_log`.execute(store.db);
    const queue = oneWindowQueue();
    const junk = (i: number, reason: string, route = 'listEncounters'): AuditInsert => ({
      ...record(i),
      organization_id: null,
      key_id: null,
      route,
      status: 401,
      reason_code: reason,
      duration_ms: i % 7,
      encounter_id: `enc_probe_${i}`,
    });
    for (let i = 0; i < 500; i++) queue.push(junk(i, 'malformed_token'));
    for (let i = 500; i < 800; i++)
      queue.push(junk(i, 'invalid_key', i % 2 ? 'getEncounter' : 'listEncounters'));
    for (let i = 800; i < 810; i++) queue.push(record(i));
    assert.equal(queue.depth, 3 + 10);
    await queue.flush();
    // A second window starts new rows; a row for one request keeps that request's IDs.
    for (let i = 810; i < 815; i++) queue.push(junk(i, 'malformed_token'));
    queue.push(junk(815, 'test_prefix_not_allowed'));
    await queue.close();
    const rows = await store.db
      .selectFrom('audit_log')
      .select([
        'request_id',
        'route',
        'reason_code',
        'key_id',
        'request_count',
        'duration_ms',
        'encounter_id',
      ])
      .orderBy('id')
      .execute();
    const folded = rows.filter((r) => r.key_id === null);
    assert.deepEqual(
      folded.map((r) => [
        r.request_id,
        r.route,
        r.reason_code,
        r.request_count,
        r.duration_ms,
        r.encounter_id,
      ]),
      [
        [record(0).request_id, 'listEncounters', 'malformed_token', 500, 6, null],
        [record(500).request_id, 'listEncounters', 'invalid_key', 150, 6, null],
        [record(501).request_id, 'getEncounter', 'invalid_key', 150, 6, null],
        [record(810).request_id, 'listEncounters', 'malformed_token', 5, 6, null],
        [record(815).request_id, 'listEncounters', 'test_prefix_not_allowed', 1, 815 % 7, 'enc_probe_815'],
      ],
    );
    const identified = rows.filter((r) => r.key_id !== null);
    assert.equal(identified.length, 10, 'a request with a key is one row each');
    assert.ok(identified.every((r) => r.request_count === 1));
  });

  test("happy: a key's 429s fold into one row per key and window; its other records stay one row each", async () => {
    await sql`DELETE FROM audit_log`.execute(store.db);
    const queue = oneWindowQueue();
    const refused = (i: number, keyId: string): AuditInsert => ({
      ...record(i),
      key_id: keyId,
      status: 429,
      reason_code: 'rate_limited',
    });
    for (let i = 0; i < 300; i++) queue.push(refused(i, i % 3 ? 'key_flood' : 'key_other'));
    queue.push({ ...record(300), key_id: 'key_flood', status: 403, reason_code: 'missing_scope' });
    queue.push({ ...record(301), key_id: 'key_flood', status: 403, reason_code: 'missing_scope' });
    await queue.close();
    const rows = await store.db
      .selectFrom('audit_log')
      .select(['request_id', 'key_id', 'reason_code', 'request_count'])
      .orderBy('id')
      .execute();
    assert.deepEqual(
      rows.map((r) => [r.request_id, r.key_id, r.reason_code, r.request_count]),
      [
        [record(300).request_id, 'key_flood', 'missing_scope', 1],
        [record(301).request_id, 'key_flood', 'missing_scope', 1],
        [record(0).request_id, 'key_other', 'rate_limited', 100],
        [record(1).request_id, 'key_flood', 'rate_limited', 200],
      ],
    );
  });
});

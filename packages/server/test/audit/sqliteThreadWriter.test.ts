/**
 * SQLite only (PostgreSQL has no WAL checkpoints in the serving process): the request thread's
 * connection never checkpoints inside a COMMIT; the audit writer thread copies the WAL into the
 * database file instead, and once more when it closes.
 */
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { afterEach, beforeEach, test } from 'node:test';
import type { Worker } from 'node:worker_threads';
import { SqliteThreadWriter } from '../../src/audit/sqliteThreadWriter.js';
import type { Store } from '../../src/database/connection.js';
import { createLogger } from '../../src/logger.js';
import { createTestStore, type TestDatabase } from '../support/stores.js';

let store: Store & { database: TestDatabase };
let logs: { msg: string; error?: string }[];
beforeEach(async () => {
  store = await createTestStore('sqlite');
  logs = [];
});
afterEach(() => store.close());

const logger = () => createLogger('info', { write: (line: string) => void logs.push(JSON.parse(line)) });
const pathOf = (s: typeof store) => (s.database.config.dialect === 'sqlite' ? s.database.config.path : '');

/** An audit record of one request. */
const record = (request_id: string) => ({
  at: 1,
  request_id,
  method: 'GET',
  route: 'listEncounters',
  status: 200,
  duration_ms: 1,
});

/** Rows written on the request thread's connection: about 1.2 MB of log for 5,000. */
function writeRows(count: number): void {
  const insert = store.sqlite!.prepare(
    'INSERT INTO audit_log (at, request_id, method, route, status, duration_ms) VALUES (?, ?, ?, ?, ?, ?)',
  );
  for (let i = 0; i < count; i++)
    insert.run(i, `req_${i}_${'x'.repeat(200)}`, 'GET', 'listEncounters', 200, 1);
}

test('happy: writes reach the database file through the writer thread, not through COMMIT', async () => {
  const sqlite = store.sqlite!;
  const path = pathOf(store);
  const writer = new SqliteThreadWriter(path, 5000, logger(), 'full', { connection: sqlite, intervalMs: 10 });
  await writer.start();
  assert.equal(sqlite.pragma('wal_autocheckpoint', { simple: true }), 0, 'taken over once the thread runs');
  const sizeBefore = statSync(path).size;
  writeRows(5000);
  while (statSync(path).size <= sizeBefore + 500_000) await new Promise((r) => setTimeout(r, 20));
  await writer.close();
  assert.deepEqual(logs, []);
  assert.equal(sqlite.pragma('wal_autocheckpoint', { simple: true }), 1000, 'ordinary checkpoints again');
});

test('happy: closing the writer checkpoints what the log still holds', async () => {
  const sqlite = store.sqlite!;
  const path = pathOf(store);
  // An interval no run of this test reaches: only the last checkpoint can copy the log.
  const writer = new SqliteThreadWriter(path, 5000, logger(), 'full', {
    connection: sqlite,
    intervalMs: 3_600_000,
  });
  await writer.start();
  const sizeBefore = statSync(path).size;
  writeRows(5000);
  assert.equal(statSync(path).size, sizeBefore, 'nothing copied while the writer runs');
  await writer.close();
  assert.ok(statSync(path).size > sizeBefore + 500_000, 'the log was copied into the file on close');
  assert.deepEqual(logs, []);
});

test('happy: without a connection to take over, the writer leaves its checkpoints alone', async () => {
  const sqlite = store.sqlite!;
  sqlite.pragma('wal_autocheckpoint = 500');
  const writer = new SqliteThreadWriter(pathOf(store), 5000, logger());
  await writer.start();
  assert.equal(sqlite.pragma('wal_autocheckpoint', { simple: true }), 500);
  await writer.close();
  assert.equal(sqlite.pragma('wal_autocheckpoint', { simple: true }), 500);
});

test('edge: a writer closed before its thread ever started, or twice, closes cleanly and takes no more groups', async () => {
  const sqlite = store.sqlite!;
  const writer = new SqliteThreadWriter(pathOf(store), 5000, logger(), 'full', {
    connection: sqlite,
    intervalMs: 10,
  });
  await writer.close();
  await writer.close();
  assert.equal(sqlite.pragma('wal_autocheckpoint', { simple: true }), 1000);
  await assert.rejects(
    writer.write([
      { at: 1, request_id: 'req_1', method: 'GET', route: 'listEncounters', status: 200, duration_ms: 1 },
    ]),
    /audit writer closed/,
  );
});

test('happy: a group handed over just before closing is committed before the thread goes', async () => {
  const sqlite = store.sqlite!;
  const writer = new SqliteThreadWriter(pathOf(store), 5000, logger(), 'full', {
    connection: sqlite,
    intervalMs: 10,
  });
  const committed = writer.write([
    { at: 1, request_id: 'req_last', method: 'GET', route: 'listEncounters', status: 200, duration_ms: 1 },
  ]);
  await writer.close();
  await committed;
  assert.equal(
    sqlite.prepare("SELECT count(*) FROM audit_log WHERE request_id = 'req_last'").pluck().get(),
    1,
  );
});

test('happy: groups handed over together are each answered once committed, a refused one alone refused', async () => {
  const sqlite = store.sqlite!;
  const writer = new SqliteThreadWriter(pathOf(store), 5000, logger());
  const groups = ['g1', 'g2', 'refused', 'g4', 'g5'].map((id) =>
    writer.write(
      // A route is required: the database refuses this group's row, and only this group's.
      id === 'refused'
        ? [{ ...record(id), route: null as unknown as string }]
        : [record(id), record(`${id}_b`)],
    ),
  );
  const outcomes = await Promise.allSettled(groups);
  assert.deepEqual(
    outcomes.map((outcome) => outcome.status),
    ['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
  );
  assert.match(String((outcomes[2] as PromiseRejectedResult).reason), /NOT NULL/);
  assert.deepEqual(sqlite.prepare('SELECT request_id FROM audit_log ORDER BY id').pluck().all(), [
    'g1',
    'g1_b',
    'g2',
    'g2_b',
    'g4',
    'g4_b',
    'g5',
    'g5_b',
  ]);
  // And the writer takes groups after them as before.
  await writer.write([record('after')]);
  await writer.close();
});

test('error: a thread that dies settles every group it held, and the next group is committed by a new thread', async () => {
  const sqlite = store.sqlite!;
  const writer = new SqliteThreadWriter(pathOf(store), 5000, logger());
  await writer.start();
  const held = ['d1', 'd2', 'd3'].map((id) => writer.write([record(id)]));
  await (writer as unknown as { worker: Worker }).worker.terminate();
  const outcomes = await Promise.allSettled(held);
  const stored = new Set(sqlite.prepare('SELECT request_id FROM audit_log').pluck().all());
  outcomes.forEach((outcome, i) => {
    // A group the thread did not answer is refused; one answered as committed is stored.
    if (outcome.status === 'fulfilled') assert.ok(stored.has(`d${i + 1}`));
    else assert.match(String(outcome.reason), /exited/);
  });
  await writer.write([record('after')]);
  assert.equal(sqlite.prepare("SELECT count(*) FROM audit_log WHERE request_id = 'after'").pluck().get(), 1);
  await writer.close();
});

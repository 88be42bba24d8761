/**
 * Group commit (decisions.md, Audit): an answer waits for the commit of the group holding its
 * record, never less; while one group is in the writer the next gathers and is handed over as
 * soon as the first is committed, in order; a group the store refuses fails its own answers and
 * no others. The writer is the real one on both stores, with a gate in front of
 * each group so the test decides when a commit may start.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import pino from 'pino';
import { type AuditWriter, KyselyAuditWriter } from '../../src/audit/auditWriter.js';
import { AuditUnavailableError, GroupCommit } from '../../src/audit/groupCommit.js';
import type { Store } from '../../src/database/connection.js';
import { createMetrics, type Metrics } from '../../src/metrics.js';
import type { AuditRecord } from '../../src/store/auditRows.js';
import { allowAll, record, refuseRequestId } from '../support/auditRecords.js';
import { histogramCountAndSum } from '../support/metrics.js';
import { createTestStore, forEachStore, type TestDatabase } from '../support/stores.js';

/** Holds each group until the test opens its gate, then commits it with the real writer. */
class GatedWriter implements AuditWriter {
  readonly groups: { size: number; open(): void }[] = [];
  constructor(private readonly inner: AuditWriter) {}

  async write(records: readonly AuditRecord[]): Promise<void> {
    await new Promise<void>((open) => this.groups.push({ size: records.length, open }));
    return this.inner.write(records);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

/** Turns of the event loop: any dispatch the group commit would make has happened after them. */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}

interface Tracked {
  state: 'waiting' | 'committed' | 'refused';
}

function commitAll(commit: GroupCommit, from: number, to: number): Tracked[] {
  return Array.from({ length: to - from }, (_, i) => {
    const tracked: Tracked = { state: 'waiting' };
    commit.commit(record(from + i)).then(
      () => {
        tracked.state = 'committed';
      },
      (error: unknown) => {
        assert.ok(error instanceof AuditUnavailableError);
        tracked.state = 'refused';
      },
    );
    return tracked;
  });
}

const states = (records: Tracked[]) => [...new Set(records.map((r) => r.state))];

forEachStore('group commit', (kind) => {
  let store: Store & { database: TestDatabase };
  before(async () => {
    store = await createTestStore(kind);
  });
  // close() also drops the test database.
  after(() => store.close());

  function groupCommit(writer: AuditWriter, metrics?: Metrics): GroupCommit {
    return new GroupCommit({
      writer,
      maxRecords: 100,
      timeoutMs: 60_000,
      logger: pino({ level: 'silent' }),
      metrics,
    });
  }

  test('happy: each answer waits for its own group; the next group gathers while one commits', {
    timeout: 60_000,
  }, async () => {
    await sql`DELETE FROM audit_log`.execute(store.db);
    const writer = new GatedWriter(new KyselyAuditWriter(store));
    const metrics = createMetrics();
    const commit = groupCommit(writer, metrics);
    const first = commitAll(commit, 0, 5);
    await until(() => writer.groups.length === 1);
    const second = commitAll(commit, 5, 8);
    await turns(5);
    const third = commitAll(commit, 8, 10);
    await turns(20);
    assert.deepEqual(
      writer.groups.map((g) => g.size),
      [5],
      'the records of one turn form one group; later ones wait while it is in the writer',
    );
    assert.deepEqual(
      states([...first, ...second, ...third]),
      ['waiting'],
      'nothing answered before a commit',
    );

    writer.groups[0]!.open();
    await until(() => first.every((r) => r.state === 'committed'));
    await until(() => writer.groups.length === 2);
    assert.equal(writer.groups[1]!.size, 5, 'what gathered meanwhile is one group, handed over at once');
    assert.deepEqual(states([...second, ...third]), ['waiting']);

    writer.groups[1]!.open();
    await until(() => [...second, ...third].every((r) => r.state === 'committed'));
    await commit.close();
    const rows = await store.db.selectFrom('audit_log').select('request_id').orderBy('id').execute();
    assert.deepEqual(
      rows.map((r) => r.request_id),
      Array.from({ length: 10 }, (_, i) => record(i).request_id),
      'committed in the order the records came',
    );
    // An operator reads the group size and the commit time from these two histograms.
    assert.deepEqual(await histogramCountAndSum(metrics.auditGroupRecords), { count: 2, sum: 10 });
    const commits = await histogramCountAndSum(metrics.auditGroupCommitDuration);
    assert.equal(commits.count, 2, 'one commit time per group');
    assert.ok(commits.sum !== undefined && commits.sum > 0);
  });

  test('error: a group the store refuses fails its own answers only, and the next group commits', {
    timeout: 60_000,
  }, async () => {
    await sql`DELETE FROM audit_log`.execute(store.db);
    await refuseRequestId(store, record(6).request_id);
    try {
      const writer = new GatedWriter(new KyselyAuditWriter(store));
      const commit = groupCommit(writer);
      const first = commitAll(commit, 0, 5);
      await until(() => writer.groups.length === 1);
      const second = commitAll(commit, 5, 8);
      writer.groups[0]!.open();
      await until(() => writer.groups.length === 2);
      const third = commitAll(commit, 8, 10);
      writer.groups[1]!.open();
      await until(() => writer.groups.length === 3);
      writer.groups[2]!.open();
      const all = [...first, ...second, ...third];
      await until(() => all.every((r) => r.state !== 'waiting'));
      assert.deepEqual(states(first), ['committed']);
      assert.deepEqual(states(second), ['refused'], 'the group holding the refused record');
      assert.deepEqual(states(third), ['committed'], 'the service goes on by itself');
      await commit.close();
      const rows = await store.db.selectFrom('audit_log').select('request_id').orderBy('id').execute();
      assert.deepEqual(
        rows.map((r) => r.request_id),
        [0, 1, 2, 3, 4, 8, 9].map((i) => record(i).request_id),
      );
    } finally {
      await allowAll(store);
    }
  });
});

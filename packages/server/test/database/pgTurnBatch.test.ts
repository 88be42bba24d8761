/**
 * Key reads made in one event-loop turn: each call gets its own rows whichever store answers,
 * and on PostgreSQL the turn's calls go to the database as one statement.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import type pg from 'pg';
import type { Store } from '../../src/database/connection.js';
import { MAX_CALLS } from '../../src/database/pgTurnBatch.js';
import { preparedQuery } from '../../src/database/preparedQuery.js';
import { unplannedInteger, unplannedText } from '../../src/database/unplannedValue.js';
import { createTestStore, forEachStore, type TestDatabase } from '../support/stores.js';

/** A key read with two text arguments and a constant of its own SQL (the allowlisted flag). */
const organizationNamed = preparedQuery(
  (db, id: string, name: string) =>
    db
      .selectFrom('organizations')
      .select(['id', 'name', 'created_at'])
      .where('id', '=', unplannedText(db, id))
      .where('name', '=', unplannedText(db, name))
      .where(sql<boolean>`allowlisted = ${unplannedInteger(db, 1)}`),
  { turnBatched: true },
);

/** A page read: number arguments (bigint arrays on PostgreSQL), several rows a call, in order. */
const organizationsCreated = preparedQuery(
  (db, prefix: string, from: number, to: number, limit: number, offset: number) =>
    db
      .selectFrom('organizations')
      .select(['created_at'])
      .where('id', 'like', unplannedText(db, prefix))
      .where('created_at', '>=', unplannedInteger(db, from))
      .where('created_at', '<', unplannedInteger(db, to))
      .orderBy('created_at', 'desc')
      .limit(unplannedInteger(db, limit))
      .offset(unplannedInteger(db, offset)),
  { turnBatched: true },
);

function organization(id: string, allowlisted: 0 | 1 = 1) {
  return {
    id,
    name: `Org ${id}`,
    allowlisted,
    routes: '[]',
    api_keys_enabled: 1 as const,
    created_at: Number(id.replace(/\D/g, '')),
    updated_at: 1,
  };
}

/** The names of the statements the pool is asked to run, in order. */
function recordStatements(pool: pg.Pool): { names: (string | undefined)[]; restore: () => void } {
  const names: (string | undefined)[] = [];
  const query = pool.query;
  pool.query = ((config: { name?: string }, ...rest: unknown[]) => {
    names.push(typeof config === 'object' ? config.name : undefined);
    return (query as (...args: unknown[]) => unknown).call(pool, config, ...rest);
  }) as typeof pool.query;
  return { names, restore: () => (pool.query = query) };
}

/** An ID with what an array literal quotes or escapes: quotes, commas, braces, a backslash. */
const ODD_ID = 'org_t"9002", {a,b} \\ \'x\'';

forEachStore('key reads made in one turn', (kind) => {
  let store: Store & { database: TestDatabase };
  before(async () => {
    store = await createTestStore(kind);
    const rows = Array.from({ length: 300 }, (_, i) => organization(`org_t${i + 1}`));
    await store.db
      .insertInto('organizations')
      .values([...rows, organization('org_t9001', 0), organization(ODD_ID), organization('NULL')])
      .execute();
  });
  after(() => store.close());

  test('happy: calls in the same turn each get their own row, an unknown or filtered one none', async () => {
    const answers = await Promise.all([
      organizationNamed(store.db, 'org_t2', 'Org org_t2'),
      organizationNamed(store.db, 'org_t1', 'Org org_t1'),
      organizationNamed(store.db, 'org_none', 'Org org_none'),
      organizationNamed(store.db, 'org_t1', 'Org org_t2'),
      organizationNamed(store.db, 'org_t9001', 'Org org_t9001'),
      organizationNamed(store.db, 'org_t3', 'Org org_t3'),
    ]);
    assert.deepEqual(answers, [
      [{ id: 'org_t2', name: 'Org org_t2', created_at: 2 }],
      [{ id: 'org_t1', name: 'Org org_t1', created_at: 1 }],
      [],
      [],
      [],
      [{ id: 'org_t3', name: 'Org org_t3', created_at: 3 }],
    ]);
  });

  test('happy: more calls in a turn than one statement carries are all answered, each with its own row', async () => {
    const ids = Array.from({ length: 300 }, (_, i) => `org_t${300 - i}`);
    const answers = await Promise.all(ids.map((id) => organizationNamed(store.db, id, `Org ${id}`)));
    assert.deepEqual(
      answers.map((rows) => rows.map((row) => row.id)),
      ids.map((id) => [id]),
    );
  });

  test('happy: pages read in the same turn each keep their own rows, order, limit and offset', async () => {
    // Each test organization's created_at is the number in its ID.
    const ids = (rows: { created_at: number }[]) => rows.map((row) => row.created_at);
    const [first, late, middle, none, big] = await Promise.all([
      organizationsCreated(store.db, 'org_t%', 1, 10, 3, 0),
      organizationsCreated(store.db, 'org_t%', 5, 300, 2, 10),
      organizationsCreated(store.db, 'org_t%', 50, 60, 100, 5),
      organizationsCreated(store.db, 'org_t%', 1000, 2000, 10, 0),
      organizationsCreated(store.db, 'org_t%', 0, 2 ** 40, 4, 0),
    ]);
    assert.deepEqual(ids(first!), [9, 8, 7]);
    assert.deepEqual(ids(late!), [289, 288]);
    assert.deepEqual(ids(middle!), [54, 53, 52, 51, 50]);
    assert.deepEqual(ids(none!), []);
    assert.deepEqual(ids(big!), [9002, 9001, 300, 299], 'numbers past 32 bits reach the read as they are');
  });

  test('happy: arguments that an array literal would quote, or the word NULL, reach the read as they are', async () => {
    const answers = await Promise.all([
      organizationNamed(store.db, ODD_ID, `Org ${ODD_ID}`),
      organizationNamed(store.db, 'NULL', 'Org NULL'),
      organizationNamed(store.db, 'org_t1', 'Org org_t1'),
    ]);
    assert.deepEqual(
      answers.map((rows) => rows.map((row) => row.id)),
      [[ODD_ID], ['NULL'], ['org_t1']],
    );
  });

  test('happy: a call alone in its turn is answered as before', async () => {
    assert.deepEqual(await organizationNamed(store.db, 'org_t7', 'Org org_t7'), [
      { id: 'org_t7', name: 'Org org_t7', created_at: 7 },
    ]);
  });

  if (kind !== 'postgres') return;

  test('performance: on PostgreSQL the calls of one turn are one statement, a lone call its own', async () => {
    const statements = recordStatements(store.pgPool!);
    try {
      await Promise.all(
        ['org_t4', 'org_t5', 'org_t6'].map((id) => organizationNamed(store.db, id, `Org ${id}`)),
      );
      assert.equal(statements.names.length, 1, 'three calls, one statement');
      assert.match(String(statements.names[0]), /_turn$/);
      await organizationNamed(store.db, 'org_t4', 'Org org_t4');
      assert.equal(statements.names.length, 2);
      assert.doesNotMatch(String(statements.names[1]), /_turn$/, 'the read’s own statement');
      await Promise.all(
        Array.from({ length: 300 }, (_, i) =>
          organizationNamed(store.db, `org_t${i + 1}`, `Org org_t${i + 1}`),
        ),
      );
      assert.equal(
        statements.names.length,
        2 + Math.ceil(300 / MAX_CALLS),
        '300 calls in one turn: statements of at most MAX_CALLS calls',
      );
    } finally {
      statements.restore();
    }
  });

  test('error: a value the database refuses fails only the call that brought it, not its turn', async () => {
    const [refused, answered, alsoAnswered] = await Promise.allSettled([
      organizationsCreated(store.db, 'org_t%', 1, 10, 3, -1),
      organizationsCreated(store.db, 'org_t%', 1, 10, 3, 0),
      organizationNamed(store.db, 'org_t1', 'Org org_t1'),
    ]);
    assert.equal(refused.status, 'rejected');
    assert.match(String((refused as PromiseRejectedResult).reason), /OFFSET must not be negative/);
    assert.deepEqual(answered, {
      status: 'fulfilled',
      value: [{ created_at: 9 }, { created_at: 8 }, { created_at: 7 }],
    });
    assert.equal(alsoAnswered.status, 'fulfilled');
  });

  test('error: a statement that fails rejects every call it carried, and the next turn reads again', async () => {
    // A lock held on the table holds the turn's statement until another connection cancels it.
    const holder = await store.pgPool!.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE organizations IN ACCESS EXCLUSIVE MODE');
      const calls = ['org_t8', 'org_t9'].map((id) =>
        organizationNamed(store.db, id, `Org ${id}`).then(
          () => 'answered',
          (error: Error) => error,
        ),
      );
      const admin = await store.pgPool!.connect();
      try {
        await waitForBlockedStatement(admin);
        await admin.query(
          "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
        );
      } finally {
        admin.release();
      }
      const outcomes = await Promise.all(calls);
      for (const outcome of outcomes) {
        assert.ok(outcome instanceof Error, 'each call of the failed statement is rejected');
        assert.match(outcome.message, /cancel/);
      }
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    assert.equal((await organizationNamed(store.db, 'org_t8', 'Org org_t8')).length, 1);
  });
});

/** Waits until a statement of this database waits on a lock (polling PostgreSQL, not a clock). */
async function waitForBlockedStatement(client: pg.PoolClient): Promise<void> {
  for (;;) {
    const { rows } = await client.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
    );
    if ((rows[0] as { n: number }).n > 0) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

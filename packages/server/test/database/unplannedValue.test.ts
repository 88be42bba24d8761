/**
 * The reads every API request makes leave SQLite's planner no bound value to plan with: with one,
 * SQLite prepares the statement again on every call (a bare `LIMIT ?` always; a column compared
 * with a bare `?` once a full ANALYZE has stored index samples). After a full ANALYZE each read
 * still finds its rows through an index.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import type { Store } from '../../src/database/connection.js';
import { BARE_PLACEHOLDER } from '../../src/database/unplannedValue.js';
import { dayAtOffsetQuery } from '../../src/readModel/read/countRollups.js';
import {
  indexCountQuery,
  organizationTotalQuery,
  windowCountBounds,
  windowCountQuery,
} from '../../src/readModel/read/counts.js';
import { documentDetailQuery, encounterReadQuery } from '../../src/readModel/read/keys.js';
import { pageQuery } from '../../src/readModel/read/pages.js';
import { recordingReadQuery } from '../../src/store/documents.js';
import { FixtureBuilder } from '../support/fixtures.js';
import { createTestStore } from '../support/stores.js';

const T0 = Date.UTC(2026, 2, 2);

let store: Store;
before(async () => {
  store = await createTestStore('sqlite');
  const fixtures = new FixtureBuilder(store.db);
  const organizationId = await fixtures.organization();
  const patientId = await fixtures.patient(organizationId);
  await fixtures.encounters(
    organizationId,
    patientId,
    // An hour apart: the count roll-ups then hold rows for 13 days and 300 hours, as a real
    // organization's do, and the planner weighs their index instead of scanning a one-row table.
    Array.from({ length: 300 }, (_, i) => T0 + i * 3_600_000),
  );
  // Index samples, as an operator's full ANALYZE stores them (the service's PRAGMA optimize does not).
  await sql`ANALYZE`.execute(store.db);
});
after(() => store.close());

function reads() {
  const db = store.db;
  return {
    'list page': pageQuery(db, 'org_a', T0, T0 + 3_600_000, 50, 10, 'desc').compile(),
    "deep page's partial day": indexCountQuery(db, 'org_a', T0, T0 + 3_600_000).compile(),
    // Whole days, whole hours on both sides and partial hours at both ends.
    "window's count": windowCountQuery(
      db,
      'org_a',
      ...windowCountBounds(T0 + 1_800_000, T0 + 5 * 86_400_000 + 5_400_000),
    ).compile(),
    "list's total": organizationTotalQuery(db, 'org_a').compile(),
    "deep offset's day, oldest first": dayAtOffsetQuery('asc')(db, 'org_a', 20_000, 20_100, 1_000).compile(),
    "deep offset's day, newest first": dayAtOffsetQuery('desc')(db, 'org_a', 20_000, 20_100, 1_000).compile(),
    'encounter detail': encounterReadQuery(db, 'enc_a', 'org_a').compile(),
    // The transcript's read is the same statement with another column selected.
    'document detail': documentDetailQuery(db, 'enc_a', 'doc_a', 'org_a').compile(),
    'audio link': recordingReadQuery(db, 'enc_a', 'doc_a', 'org_a').compile(),
  };
}

test('happy: no read of the request path leaves a bare placeholder for SQLite to plan with', () => {
  for (const [name, query] of Object.entries(reads())) {
    assert.doesNotMatch(query.sql, BARE_PLACEHOLDER, `${name}: ${query.sql}`);
  }
});

test('happy: after a full ANALYZE every such read still finds its rows through an index, unsorted', async () => {
  for (const [name, query] of Object.entries(reads())) {
    const { rows } = await store.db.executeQuery(
      CompiledQuery.raw(`EXPLAIN QUERY PLAN ${query.sql}`, [...query.parameters]),
    );
    const plan = JSON.stringify(rows);
    // A subquery in FROM runs as a co-routine, whose rows (one, here) are scanned: not a table.
    const coroutines = [...plan.matchAll(/"CO-ROUTINE (\w+)"/g)].map((match) => match[1]);
    const scans = [...plan.matchAll(/"SCAN (\w+)/g)].map((match) => match[1]);
    const tableScans = scans.filter((scanned) => scanned !== 'CONSTANT' && !coroutines.includes(scanned));
    assert.deepEqual(tableScans, [], `${name} scans a table or a whole index: ${plan}`);
    assert.doesNotMatch(plan, /AUTOMATIC|BLOOM FILTER/, `${name} builds an index of its own: ${plan}`);
    assert.doesNotMatch(plan, /TEMP B-TREE/, `${name} sorts: ${plan}`);
  }
});

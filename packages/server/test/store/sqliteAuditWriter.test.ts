/**
 * The audit writer thread's inserts on a real SQLite file: a group of any size is written whole,
 * each record once, with its own fields and patient set, whichever insert shapes it is split into.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import type { Store } from '../../src/database/connection.js';
import type { AuditRecord } from '../../src/store/auditRows.js';
import { sqliteAuditWriter } from '../../src/store/sqliteAuditWriter.js';
import { createTestStore, type TestDatabase } from '../support/stores.js';

let store: Store & { database: TestDatabase };
beforeEach(async () => {
  store = await createTestStore('sqlite');
});
afterEach(() => store.close());

function record(group: number, i: number): AuditRecord {
  return {
    at: 1_800_000_000_000 + group * 1000 + i,
    request_id: `req_${group}_${i}`,
    organization_id: 'org_a',
    key_id: 'key_a',
    method: 'GET',
    route: 'getEncounter',
    encounter_id: `enc_${i}`,
    document_id: null,
    status: 200,
    reason_code: null,
    duration_ms: i / 4,
    patient_ids: i % 3 === 0 ? undefined : [`pat_${i % 5}`],
  };
}

test('happy: groups of every size from 1 to 70 are written whole, each record once with its own fields', () => {
  const write = sqliteAuditWriter(store.sqlite!);
  const expected: string[] = [];
  for (let size = 1; size <= 70; size++) {
    const group = Array.from({ length: size }, (_, i) => record(size, i));
    write(group);
    for (const r of group)
      expected.push(
        `${r.request_id} ${r.at} ${r.encounter_id} ${r.duration_ms} ${r.patient_ids ? 'set' : 'none'}`,
      );
  }
  const rows = store
    .sqlite!.prepare(
      `SELECT request_id, at, encounter_id, duration_ms, patient_set IS NOT NULL AS has_set FROM audit_log ORDER BY at`,
    )
    .all() as {
    request_id: string;
    at: number;
    encounter_id: string;
    duration_ms: number;
    has_set: number;
  }[];
  assert.deepEqual(
    rows.map(
      (r) => `${r.request_id} ${r.at} ${r.encounter_id} ${r.duration_ms} ${r.has_set ? 'set' : 'none'}`,
    ),
    expected,
  );
  assert.equal(rows.length, (70 * 71) / 2);
});

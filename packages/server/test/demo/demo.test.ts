import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { digestToken } from '../../src/auth/digest.js';
import { isWellFormedToken } from '../../src/auth/token.js';
import { SCOPES } from '../../src/contract/routes.js';
import type { Db } from '../../src/database/connection.js';
import { AUDIO_POOL, MISSING_AUDIO_KEY } from '../../src/demo/demoPlan.js';
import { type DemoResult, loadDemo } from '../../src/demo/loadDemo.js';
import type { Services } from '../../src/services.js';
import { findKeyByDigest } from '../../src/store/apiKeys.js';
import { dayOf, hourOf } from '../../src/time.js';
import { createCommandServices } from '../support/cli.js';
import { TEST_DIGEST_SECRET } from '../support/fixtures.js';
import { forEachStore } from '../support/stores.js';

const ENCOUNTERS = 30;
const SPECIALS = 6;

/** Every demo row except keys (new each run), ordered so two loads can be compared. */
async function dump(db: Db) {
  return {
    organizations: await db.selectFrom('organizations').selectAll().orderBy('id').execute(),
    patients: await db.selectFrom('patients').selectAll().orderBy('id').execute(),
    encounters: await db.selectFrom('encounters').selectAll().orderBy('id').execute(),
    documents: await db.selectFrom('documents').selectAll().orderBy('id').execute(),
    transcripts: await db.selectFrom('transcripts').selectAll().orderBy('document_id').execute(),
    recordings: await db.selectFrom('recordings').selectAll().orderBy('document_id').execute(),
    dayCounts: await db
      .selectFrom('encounter_day_counts')
      .selectAll()
      .orderBy('organization_id')
      .orderBy('day')
      .execute(),
    totals: await db.selectFrom('encounter_counts').selectAll().orderBy('organization_id').execute(),
    events: await db.selectFrom('webhook_events').select('id').execute(),
  };
}

forEachStore('eds demo', (kind) => {
  let a: { services: Services; close(): Promise<void>; database: { dir: string } };
  let b: { services: Services; close(): Promise<void> };
  let first: DemoResult;

  before(async () => {
    a = await createCommandServices(kind);
    b = await createCommandServices(kind);
    first = await loadDemo(a.services, { seed: 7, encounters: ENCOUNTERS });
  });
  after(async () => {
    await a.close();
    await b.close();
  });

  test('the same seed gives the same data on another database, and re-running changes nothing', async () => {
    const second = await loadDemo(b.services, { seed: 7, encounters: ENCOUNTERS });
    const dumpA = await dump(a.services.store.db);
    assert.deepEqual(await dump(b.services.store.db), dumpA);
    assert.deepEqual(second.organizations, first.organizations);
    assert.deepEqual(second.examples, first.examples);
    assert.notEqual(second.token, first.token);

    const rerun = await loadDemo(a.services, { seed: 7, encounters: ENCOUNTERS });
    assert.deepEqual(await dump(a.services.store.db), dumpA);
    assert.equal(rerun.organizationId, first.organizationId);
    const keys = await a.services.store.db.selectFrom('api_keys').select('id').execute();
    assert.equal(keys.length, 2, 'one new key per run, nothing else added');
  });

  test('the planner has statistics for the loaded tables and the read model afterwards, and PostgreSQL has vacuumed them (no stale plans or heap visits after a bulk load)', async () => {
    const db = a.services.store.db;
    if (kind === 'postgres') {
      const { rows } = await sql<{ relname: string }>`
        SELECT relname FROM pg_stat_user_tables WHERE last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL`.execute(
        db,
      );
      const analyzed = rows.map((r) => r.relname);
      for (const table of ['encounters', 'patients', 'documents', 'encounter_reads', 'document_reads']) {
        assert.ok(analyzed.includes(table), table);
      }
      // Vacuumed too: pages marked all-visible, so index-only scans need not visit the table.
      const { rows: visibility } = await sql<{ relname: string; relallvisible: number }>`
        SELECT relname, relallvisible FROM pg_class
        WHERE relname IN ('encounters', 'documents', 'encounter_reads', 'document_reads')`.execute(db);
      assert.equal(visibility.length, 4);
      for (const row of visibility) assert.ok(row.relallvisible > 0, `${row.relname} all-visible pages`);
    } else {
      const { rows } = await sql<{ tbl: string }>`SELECT DISTINCT tbl FROM sqlite_stat1`.execute(db);
      assert.ok(rows.map((r) => r.tbl).includes('encounters'));
    }
  });

  test('a load on PostgreSQL analyzes its tables while they grow, not only once at the end', {
    skip: kind === 'sqlite' ? 'SQLite plans these reads by their indexes without statistics' : false,
  }, async () => {
    const other = await createCommandServices(kind);
    try {
      // About 15,000 rows: past the first mark (10,000), so one analyze during the load.
      await loadDemo(other.services, { seed: 9, encounters: 2500 });
      const { rows } = await sql<{ analyze_count: string }>`
        SELECT analyze_count FROM pg_stat_user_tables WHERE relname = 'documents'`.execute(
        other.services.store.db,
      );
      assert.ok(Number(rows[0]!.analyze_count) >= 2, `analyzed ${rows[0]!.analyze_count} times`);
    } finally {
      await other.close();
    }
  });

  test('another seed gives other data', async () => {
    const other = await createCommandServices(kind);
    try {
      const result = await loadDemo(other.services, { seed: 8, encounters: 5 });
      assert.notEqual(result.organizationId, first.organizationId);
      const ids = (db: Db) => db.selectFrom('encounters').select('id').execute();
      const mine = new Set((await ids(a.services.store.db)).map((r) => r.id));
      assert.ok((await ids(other.services.store.db)).every((r) => !mine.has(r.id)));
    } finally {
      await other.close();
    }
  });

  test('the printed key is a well-formed live key of the main organization with every scope', async () => {
    assert.ok(isWellFormedToken(first.token));
    assert.match(first.token, /^eds_live_/);
    const found = await findKeyByDigest(a.services.store.db, digestToken(first.token, TEST_DIGEST_SECRET));
    assert.equal(found?.key.id, first.keyId);
    assert.equal(found?.organization.id, first.organizationId);
    assert.deepEqual(found?.key.scopes, [...SCOPES]);
    assert.equal(found?.key.state, 'active');
    assert.equal(found?.organization.allowlisted, true);
    assert.deepEqual(found?.organization.routes, ['encounters', 'documents']);
  });

  test('the organizations cover allowlisted, not allowlisted, encounters only and API keys off', async () => {
    const db = a.services.store.db;
    const orgs = new Map((await db.selectFrom('organizations').selectAll().execute()).map((o) => [o.id, o]));
    const { main, not_allowlisted, encounters_only, api_keys_off } = first.organizations;
    assert.equal(orgs.get(main)?.allowlisted, 1);
    assert.equal(orgs.get(not_allowlisted)?.allowlisted, 0);
    assert.equal(orgs.get(encounters_only)?.routes, '["encounters"]');
    assert.equal(orgs.get(api_keys_off)?.api_keys_enabled, 0);
    const mainEncounters = await db
      .selectFrom('encounters')
      .selectAll()
      .where('organization_id', '=', main)
      .execute();
    assert.equal(mainEncounters.length, ENCOUNTERS + SPECIALS);
    assert.equal(first.encounters, (await db.selectFrom('encounters').select('id').execute()).length);
    for (const org of [not_allowlisted, encounters_only, api_keys_off]) {
      const n = await db.selectFrom('encounters').select('id').where('organization_id', '=', org).execute();
      assert.ok(n.length > 0);
    }
  });

  test('the data is consistent: tenants match along every reference, and day counts match the encounters', async () => {
    const db = a.services.store.db;
    const mismatchedPatients = await db
      .selectFrom('encounters as e')
      .innerJoin('patients as p', 'p.id', 'e.patient_id')
      .select('e.id')
      .whereRef('p.organization_id', '<>', 'e.organization_id')
      .execute();
    assert.deepEqual(mismatchedPatients, []);
    const mismatchedDocuments = await db
      .selectFrom('documents as d')
      .innerJoin('encounters as e', 'e.id', 'd.encounter_id')
      .select('d.id')
      .whereRef('d.organization_id', '<>', 'e.organization_id')
      .execute();
    assert.deepEqual(mismatchedDocuments, []);

    const expected = new Map<string, number>();
    const expectedHours = new Map<string, number>();
    for (const e of await db.selectFrom('encounters').selectAll().where('demo_training', '=', 0).execute()) {
      const key = `${e.organization_id}/${dayOf(e.created_at)}`;
      expected.set(key, (expected.get(key) ?? 0) + 1);
      const hourKey = `${e.organization_id}/${hourOf(e.created_at)}`;
      expectedHours.set(hourKey, (expectedHours.get(hourKey) ?? 0) + 1);
    }
    const counts = await db.selectFrom('encounter_day_counts').selectAll().execute();
    assert.deepEqual(
      new Map(counts.filter((c) => c.count !== 0).map((c) => [`${c.organization_id}/${c.day}`, c.count])),
      expected,
    );
    const hourCounts = await db.selectFrom('encounter_hour_counts').selectAll().execute();
    assert.deepEqual(
      new Map(
        hourCounts.filter((c) => c.count !== 0).map((c) => [`${c.organization_id}/${c.hour}`, c.count]),
      ),
      expectedHours,
    );
    // Each organization's list total is the sum of its days.
    const expectedTotals = new Map<string, number>();
    for (const [key, count] of expected) {
      const organization = key.slice(0, key.lastIndexOf('/'));
      expectedTotals.set(organization, (expectedTotals.get(organization) ?? 0) + count);
    }
    const totals = await db.selectFrom('encounter_counts').selectAll().execute();
    assert.deepEqual(
      new Map(totals.filter((t) => t.count !== 0).map((t) => [t.organization_id, Number(t.count)])),
      expectedTotals,
    );
  });

  test('one record of each awkward kind is there, as the examples say', async () => {
    const db = a.services.store.db;
    const ex = first.examples;
    const transcriptOf = (id: string) =>
      db.selectFrom('transcripts').selectAll().where('document_id', '=', id).executeTakeFirst();
    const recordingOf = (id: string) =>
      db.selectFrom('recordings').selectAll().where('document_id', '=', id).executeTakeFirst();
    const docs = (ids: string[]) => db.selectFrom('documents').selectAll().where('id', 'in', ids).execute();

    const [ambient] = ex.complete!.document_ids;
    assert.equal((await transcriptOf(ambient!))?.finalized, 1);
    const recording = await recordingOf(ambient!);
    assert.ok(recording && (await a.services.media.exists(recording.object_key)));

    assert.equal((await transcriptOf(ex.unfinalized_transcript!.document_ids[0]!))?.finalized, 0);
    assert.equal(await recordingOf(ex.no_recording!.document_ids[0]!), undefined);
    const missing = await recordingOf(ex.recording_missing_from_storage!.document_ids[0]!);
    assert.equal(missing?.object_key, MISSING_AUDIO_KEY);
    assert.equal(await a.services.media.exists(MISSING_AUDIO_KEY), false);
    const internal = await docs(ex.internal_document!.document_ids);
    assert.ok(internal.some((d) => d.schema_type === 'internal_summary'));
    const training = await db
      .selectFrom('encounters')
      .selectAll()
      .where('id', '=', ex.demo_training!.encounter_id)
      .executeTakeFirst();
    assert.equal(training?.demo_training, 1);
  });

  test('notes, transcripts and recordings look real', async () => {
    const db = a.services.store.db;
    const notes = await db
      .selectFrom('documents')
      .selectAll()
      .where('schema_type', '=', 'document')
      .where('title', 'like', '% note')
      .execute();
    assert.ok(notes.length >= ENCOUNTERS);
    assert.ok(
      notes.every(
        (n) => n.content_format === 'markdown' && /## Subjective[\s\S]*## Plan/.test(n.content_text ?? ''),
      ),
    );
    const transcripts = await db.selectFrom('transcripts').selectAll().where('finalized', '=', 1).execute();
    assert.ok(transcripts.length > 5);
    for (const t of transcripts) {
      const turns = JSON.parse(t.turns) as { speaker: string; start: number; end: number }[];
      assert.deepEqual([...new Set(turns.map((x) => x.speaker))].sort(), ['clinician', 'patient']);
      turns.forEach((turn, i) => {
        assert.ok(turn.end > turn.start);
        if (i > 0) assert.ok(turn.start >= turns[i - 1]!.end);
      });
      assert.ok(t.audio_duration_seconds! >= turns.at(-1)!.end);
    }
    const created = (await db.selectFrom('encounters').select('created_at').execute()).map(
      (e) => e.created_at,
    );
    assert.ok(Math.max(...created) - Math.min(...created) > 300 * 86_400_000, 'spread over many months');

    for (const { key } of AUDIO_POOL) {
      const wav = readFileSync(join(a.database.dir, 'media', key));
      assert.equal(wav.toString('ascii', 0, 4), 'RIFF');
      assert.equal(wav.toString('ascii', 8, 12), 'WAVE');
      assert.equal(wav.readUInt16LE(20), 1, 'PCM');
      assert.equal(wav.readUInt32LE(40), wav.length - 44, 'data chunk fills the file');
      assert.ok(wav.length > 8000 * 2 * 2, 'a few seconds of audio');
    }
  });
});

/**
 * `eds migrate` builds the read model for data stored before it existed, as a step after the
 * migrations: the stored answers it writes are the ones an import of the same rows would have
 * written, and a build cut short is finished by the next run. The migrations build each
 * organization's list total from the day counts.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Migrator, sql } from 'kysely';
import type { Db, Store } from '../../../src/database/connection.js';
import { migrateToLatest } from '../../../src/database/migrate.js';
import { migrationProvider } from '../../../src/database/migrations/index.js';
import { applyReadModelChanges } from '../../../src/readModel/write/changes.js';
import { upsertDocuments, upsertPatients, upsertTranscripts } from '../../../src/store/clinicalWrites.js';
import { upgradeStore } from '../../../src/upgradeStore.js';
import { createUnmigratedStore, forEachStore } from '../../support/stores.js';

const T = Date.parse('2026-05-01T15:00:00Z');

/**
 * An organization as an earlier schema holds it, written without today's store code (which also
 * writes tables of later migrations, such as the change signals).
 */
async function organizationStoredBefore(db: Db, id: string, routes: string[]): Promise<void> {
  await db
    .insertInto('organizations')
    .values({
      id,
      name: id,
      allowlisted: 1,
      routes: JSON.stringify(routes),
      api_keys_enabled: 1,
      created_at: T,
      updated_at: T,
    })
    .execute();
}

forEachStore('read model migration', (kind) => {
  let store: Store;
  before(async () => {
    store = await createUnmigratedStore(kind);
  });
  // close() also drops the test database.
  after(() => store.close());

  test('happy: migrating data stored before the read model builds every stored answer', async () => {
    const migrator = new Migrator({ db: store.db, provider: migrationProvider });
    const { error } = await migrator.migrateTo('004_audit_request_count');
    assert.equal(error, undefined);
    await organizationStoredBefore(store.db, 'org_m', ['encounters', 'documents']);
    await store.db.transaction().execute(async (tx) => {
      await upsertPatients(tx, [
        {
          id: 'pat_m',
          organization_id: 'org_m',
          first_name: 'Ana',
          last_name: 'Silva',
          date_of_birth: '1980-02-29',
          created_at: T,
          updated_at: T,
        },
      ]);
      // As stored then: today's writer also keeps tables that later migrations add.
      await tx
        .insertInto('encounters')
        .values(
          ['enc_m1', 'enc_m2'].map((id, i) => ({
            id,
            organization_id: 'org_m',
            patient_id: 'pat_m',
            encounter_type: 'ambient',
            status: 'completed',
            date_of_service: T,
            created_at: T + i,
            updated_at: T + i,
            demo_training: 0 as const,
          })),
        )
        .execute();
      const doc = (id: string, schema_type: string, created: number) => ({
        id,
        encounter_id: 'enc_m1',
        organization_id: 'org_m',
        schema_type,
        title: id,
        status: schema_type === 'document' ? null : 'completed',
        workflow_variant: schema_type === 'document' ? null : 'ambient',
        audio_duration_seconds: schema_type === 'ambient_transcript' ? 12.5 : null,
        content_format: schema_type === 'document' ? 'markdown' : null,
        content_text: schema_type === 'document' ? '# note' : null,
        created_at: created,
        updated_at: created,
      });
      await upsertDocuments(tx, [
        doc('doc_note', 'document', T + 2),
        doc('doc_amb', 'ambient_transcript', T + 1),
        doc('doc_int', 'internal_summary', T),
      ]);
      await upsertTranscripts(tx, [
        {
          document_id: 'doc_amb',
          finalized: 1,
          provider: 'asr',
          audio_duration_seconds: 12.5,
          turns: JSON.stringify([{ speaker: 'clinician', start: 0, end: 1, text: 'Hello.' }]),
          finalized_at: T,
        },
      ]);
    });

    const upgrade = await upgradeStore(store.db);
    assert.ok(upgrade.migrated.includes('005_read_model'));
    // Written without their day counts, which the upgrade builds too.
    assert.deepEqual(upgrade.built, ['read_model', 'encounter_counts']);
    assert.deepEqual(upgrade.recounted, ['org_m']);

    const encounters = await store.db
      .selectFrom('encounter_reads')
      .selectAll()
      .orderBy('encounter_id')
      .execute();
    const documents = await store.db
      .selectFrom('document_reads')
      .selectAll()
      .orderBy('document_id')
      .execute();
    assert.deepEqual(
      encounters.map((r) => r.encounter_id),
      ['enc_m1', 'enc_m2'],
    );
    const summary = JSON.parse(encounters[0]!.summary);
    assert.deepEqual(
      summary.documents.map((d: { document_id: string }) => d.document_id),
      ['doc_amb', 'doc_note'],
      'public documents, in created_at order',
    );
    assert.equal(summary.patient.last_name, 'Silva');
    const byId = new Map(documents.map((d) => [d.document_id, d]));
    assert.equal(byId.get('doc_int')?.detail, null);
    assert.equal(JSON.parse(byId.get('doc_note')!.detail!).content.text, '# note');
    assert.equal(JSON.parse(byId.get('doc_amb')!.transcript!).transcript.turns[0].text, 'Hello.');

    // Exactly what the writers of clinical data store for the same rows.
    await store.db.transaction().execute((tx) =>
      applyReadModelChanges(tx, {
        encounters: ['enc_m1', 'enc_m2'],
        documents: ['doc_note', 'doc_amb', 'doc_int'],
      }),
    );
    assert.deepEqual(
      await store.db.selectFrom('encounter_reads').selectAll().orderBy('encounter_id').execute(),
      encounters,
    );
    assert.deepEqual(
      await store.db.selectFrom('document_reads').selectAll().orderBy('document_id').execute(),
      documents,
    );
  });

  test('happy: a read model build cut short is finished by the next upgrade, and a whole one left alone', async () => {
    const whole = await store.db.selectFrom('encounter_reads').selectAll().orderBy('encounter_id').execute();
    assert.deepEqual(await upgradeStore(store.db), { migrated: [], built: [], recounted: [] });

    await store.db.deleteFrom('encounter_reads').where('encounter_id', '=', 'enc_m2').execute();
    await store.db.deleteFrom('document_reads').where('document_id', '=', 'doc_note').execute();
    assert.deepEqual(await upgradeStore(store.db), { migrated: [], built: ['read_model'], recounted: [] });

    assert.deepEqual(
      await store.db.selectFrom('encounter_reads').selectAll().orderBy('encounter_id').execute(),
      whole,
    );
    const notes = await store.db
      .selectFrom('document_reads')
      .select('detail')
      .where('document_id', '=', 'doc_note')
      .execute();
    assert.equal(JSON.parse(notes[0]!.detail!).content.text, '# note');
  });
});

forEachStore('organization totals migration', (kind) => {
  let store: Store;
  before(async () => {
    store = await createUnmigratedStore(kind);
  });
  after(() => store.close());

  test("happy: migrating builds each organization's total from its day counts", async () => {
    const migrator = new Migrator({ db: store.db, provider: migrationProvider });
    assert.equal((await migrator.migrateTo('010_audit_patient_index')).error, undefined);
    await store.db
      .insertInto('encounter_day_counts')
      .values([
        { organization_id: 'org_a', day: 20_000, count: 3 },
        { organization_id: 'org_a', day: 20_001, count: 4 },
        { organization_id: 'org_b', day: 20_000, count: 5 },
      ])
      .execute();

    assert.ok((await migrateToLatest(store.db)).includes('011_encounter_counts'));

    const totals = await store.db
      .selectFrom('encounter_counts')
      .select(['organization_id', 'count'])
      .orderBy('organization_id')
      .execute();
    assert.deepEqual(
      totals.map((t) => [t.organization_id, Number(t.count)]),
      [
        ['org_a', 7],
        ['org_b', 5],
      ],
    );
  });
});

forEachStore('encounter hour counts migration', (kind) => {
  let store: Store;
  before(async () => {
    store = await createUnmigratedStore(kind);
  });
  after(() => store.close());

  test("happy: migrating counts each organization's listable encounters by hour", async () => {
    const migrator = new Migrator({ db: store.db, provider: migrationProvider });
    assert.equal((await migrator.migrateTo('012_webhook_endpoint_health')).error, undefined);
    for (const id of ['org_a', 'org_b']) await organizationStoredBefore(store.db, id, ['encounters']);
    await upsertPatients(
      store.db,
      ['org_a', 'org_b'].map((organization) => ({
        id: `pat_${organization}`,
        organization_id: organization,
        first_name: 'Ana',
        last_name: 'Silva',
        date_of_birth: '1980-02-29',
        created_at: T,
        updated_at: T,
      })),
    );
    const HOUR = 3_600_000;
    const T0 = Math.floor(T / 86_400_000) * 86_400_000;
    const encounter = (id: string, organization: string, createdAt: number, demoTraining: 0 | 1 = 0) => ({
      id,
      organization_id: organization,
      patient_id: `pat_${organization}`,
      encounter_type: 'ambient',
      status: 'completed',
      date_of_service: createdAt,
      created_at: createdAt,
      updated_at: createdAt,
      demo_training: demoTraining,
    });
    // Written as an older release wrote them: rows only, no hour counts yet.
    await store.db
      .insertInto('encounters')
      .values([
        encounter('enc_1', 'org_a', T0 + 9 * HOUR),
        encounter('enc_2', 'org_a', T0 + 9 * HOUR + 59 * 60_000),
        encounter('enc_3', 'org_a', T0 + 10 * HOUR),
        encounter('enc_4', 'org_a', T0 + 10 * HOUR + 1, 1),
        encounter('enc_5', 'org_b', T0 + 9 * HOUR + 1),
      ])
      .execute();

    assert.ok((await migrateToLatest(store.db)).includes('013_encounter_hour_counts'));

    const hours = await store.db
      .selectFrom('encounter_hour_counts')
      .select(['organization_id', 'hour', 'count'])
      .orderBy('organization_id')
      .orderBy('hour')
      .execute();
    const hourOfT0 = T0 / HOUR;
    assert.deepEqual(
      hours.map((h) => [h.organization_id, Number(h.hour), Number(h.count)]),
      [
        ['org_a', hourOfT0 + 9, 2],
        ['org_a', hourOfT0 + 10, 1],
        ['org_b', hourOfT0 + 9, 1],
      ],
    );
  });
});

forEachStore('day running totals migration', (kind) => {
  let store: Store;
  before(async () => {
    store = await createUnmigratedStore(kind);
  });
  after(() => store.close());

  test("happy: migrating gives each day the organization's listable encounters on its earlier days", async () => {
    const migrator = new Migrator({ db: store.db, provider: migrationProvider });
    assert.equal((await migrator.migrateTo('013_encounter_hour_counts')).error, undefined);
    const days: [string, number, number][] = [
      ['org_a', 20_000, 3],
      ['org_a', 20_002, 0],
      ['org_a', 20_005, 4],
      ['org_a', 20_006, 2],
      ['org_b', 19_000, 5],
      ['org_b', 20_001, 1],
    ];
    await sql`insert into encounter_day_counts (organization_id, day, count) values ${sql.join(
      days.map(([organization, day, count]) => sql`(${organization}, ${day}, ${count})`),
    )}`.execute(store.db);

    assert.ok((await migrateToLatest(store.db)).includes('014_encounter_day_running_counts'));

    const rows = await store.db
      .selectFrom('encounter_day_counts')
      .select(['organization_id', 'day', 'earlier'])
      .orderBy('organization_id')
      .orderBy('day')
      .execute();
    assert.deepEqual(
      rows.map((row) => [row.organization_id, Number(row.day), Number(row.earlier)]),
      [
        ['org_a', 20_000, 0],
        ['org_a', 20_002, 3],
        ['org_a', 20_005, 3],
        ['org_a', 20_006, 7],
        ['org_b', 19_000, 0],
        ['org_b', 20_001, 5],
      ],
    );
  });
});

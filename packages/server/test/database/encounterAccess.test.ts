/**
 * The 403/404 classification reads only flags of another organization's encounter: whether it is
 * the caller's and whether it is demo/training. Its patient, stored summary and documents are
 * joined under the caller's organization, so a lookup of another organization's encounter brings
 * none of them out of the database. Every row the store returns is watched through a Kysely
 * plugin (the reads then go through Kysely instead of their direct paths).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { KyselyPlugin, UnknownRow } from 'kysely';
import type { Db, Store } from '../../src/database/connection.js';
import { documentDetailRead, encounterRead, transcriptRead } from '../../src/readModel/read/keys.js';
import { findDocumentAccess } from '../../src/store/documents.js';
import { FixtureBuilder } from '../support/fixtures.js';
import { createTestStore, forEachStore } from '../support/stores.js';

/** A view of the store that keeps every row the database returns through it. */
function watchedRows(db: Db): { db: Db; rows: UnknownRow[] } {
  const rows: UnknownRow[] = [];
  const plugin: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      rows.push(...args.result.rows);
      return args.result;
    },
  };
  return { db: db.withPlugin(plugin), rows };
}

forEachStore('encounter access', (kind) => {
  let store: Store;
  let fixtures: FixtureBuilder;
  let orgA: string;
  let orgB: string;
  let patientB: string;
  let encounterB: string;
  let noteB: string;
  let ambientB: string;
  let demoA: string;
  before(async () => {
    store = await createTestStore(kind);
    fixtures = new FixtureBuilder(store.db);
    orgA = await fixtures.organization();
    orgB = await fixtures.organization();
    patientB = await fixtures.patient(orgB);
    encounterB = await fixtures.encounter(orgB, { patientId: patientB });
    noteB = await fixtures.document(orgB, encounterB);
    ambientB = await fixtures.document(orgB, encounterB, {
      schemaType: 'ambient_transcript',
      recordingKey: `recordings/${encounterB}/ambient.wav`,
    });
    demoA = await fixtures.encounter(orgA, { demoTraining: true });
  });
  after(() => store.close());

  /** Everything of organization B a row could leak: IDs, patient name, documents' text. */
  function leakedValues(rows: UnknownRow[]): string[] {
    const text = JSON.stringify(rows);
    const secrets = [orgB, patientB, noteB, ambientB, ...fixtures.secrets, 'SOAP note', 'Headache'];
    return secrets.filter((secret) => text.includes(secret));
  }

  test('security: another organization’s encounter is read for its flags only, never its patient or summary', async () => {
    const watched = watchedRows(store.db);
    const rows = await encounterRead(watched.db, encounterB, orgA);
    assert.deepEqual(rows, [{ own: 0, demo_training: 0, patient_id: null, summary: null, etag: null }]);
    assert.deepEqual(leakedValues(watched.rows), []);
  });

  test('security: document, transcript and audio lookups under another organization’s encounter bring nothing of it back', async () => {
    const watched = watchedRows(store.db);
    const [detail] = await documentDetailRead(watched.db, encounterB, noteB, orgA);
    assert.deepEqual(detail, {
      own: 0,
      demo_training: 0,
      patient_id: null,
      document_id: null,
      schema_type: null,
      body: null,
      etag: null,
    });
    const [transcript] = await transcriptRead(watched.db, encounterB, ambientB, orgA);
    assert.equal(transcript?.own, 0);
    assert.equal(transcript?.body, null);
    assert.deepEqual(await findDocumentAccess(watched.db, orgA, encounterB, ambientB), {
      status: 'other_organization',
    });
    assert.ok(watched.rows.length >= 3, 'every read went through the watched view');
    assert.deepEqual(leakedValues(watched.rows), []);
  });

  test('happy: the same reads by the owning organization carry its patient, summary and documents', async () => {
    const watched = watchedRows(store.db);
    const [encounter] = await encounterRead(watched.db, encounterB, orgB);
    assert.equal(encounter?.own, 1);
    assert.equal(encounter?.patient_id, patientB);
    assert.match(encounter?.summary ?? '', new RegExp(patientB));
    const [detail] = await documentDetailRead(watched.db, encounterB, noteB, orgB);
    assert.equal(detail?.document_id, noteB);
    const access = await findDocumentAccess(watched.db, orgB, encounterB, ambientB);
    assert.equal(access.status, 'found');
    assert.ok(leakedValues(watched.rows).includes(patientB), 'the watch sees what the owner reads');
  });

  test('security: the caller’s own demo/training encounter is classified without its summary being read', async () => {
    const [row] = await encounterRead(store.db, demoA, orgA);
    assert.deepEqual(row, { own: 1, demo_training: 1, patient_id: null, summary: null, etag: null });
  });

  test('an unknown encounter ID matches no row at all (404)', async () => {
    assert.deepEqual(await encounterRead(store.db, 'enc_unknown', orgA), []);
  });
});

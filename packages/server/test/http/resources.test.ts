/**
 * Routes 2-5: exact response shapes (the contract's fields, nulls present, nothing extra) and
 * every resource reason code, in the contract's order.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useServerWithWorld } from '../support/serverWithWorld.js';
import { forEachStore } from '../support/stores.js';
import { pathFor } from '../support/world.js';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

forEachStore('resources', (kind) => {
  const given = useServerWithWorld(kind);

  const get = (path: string, token = given.world.token) => given.server.api.get(path, { token });
  const code = async (path: string, token?: string) => {
    const r = await get(path, token);
    return `${r.status} ${r.body.reason_code ?? ''}`.trim();
  };

  test('happy: encounter detail has exactly the contract fields, UTC millisecond datetimes, public documents in created_at order', async () => {
    const r = await get(pathFor('getEncounter', given.world));
    assert.deepEqual(Object.keys(r.body), ['encounter']);
    const e = r.body.encounter;
    assert.deepEqual(Object.keys(e).sort(), [
      'created_at',
      'date_of_service',
      'documents',
      'encounter_id',
      'encounter_type',
      'organization_id',
      'patient',
      'status',
      'updated_at',
    ]);
    for (const field of ['created_at', 'updated_at', 'date_of_service']) assert.match(e[field], ISO_MS);
    assert.equal(e.encounter_id, given.world.encounter);
    assert.equal(e.organization_id, given.world.orgA);
    assert.deepEqual(Object.keys(e.patient).sort(), [
      'date_of_birth',
      'first_name',
      'last_name',
      'patient_id',
    ]);
    assert.match(e.patient.date_of_birth, /^\d{4}-\d{2}-\d{2}$/);
    // The internal schema type is not listed; the rest in created_at order.
    assert.deepEqual(
      e.documents.map((d: { document_id: string }) => d.document_id),
      [
        given.world.ambient,
        given.world.unfinalized,
        given.world.note,
        given.world.bare,
        given.world.missingAudio,
      ],
    );
    const note = e.documents.find((d: { document_id: string }) => d.document_id === given.world.note);
    assert.deepEqual(note, {
      document_id: given.world.note,
      schema_type: 'document',
      title: 'SOAP note',
      status: null,
      workflow_variant: null,
      audio_duration_seconds: null,
    });
    const ambient = e.documents.find((d: { document_id: string }) => d.document_id === given.world.ambient);
    assert.deepEqual(ambient, {
      document_id: given.world.ambient,
      schema_type: 'ambient_transcript',
      title: 'Visit recording',
      status: 'completed',
      workflow_variant: 'ambient',
      audio_duration_seconds: 612.4,
    });
  });

  test('happy: document detail carries markdown content for a document and no content field for a transcript', async () => {
    const note = (await get(pathFor('getDocument', given.world))).body.document;
    assert.deepEqual(Object.keys(note).sort(), [
      'content',
      'created_at',
      'document_id',
      'encounter_id',
      'schema_type',
      'status',
      'title',
      'updated_at',
      'workflow_variant',
    ]);
    assert.deepEqual(note.content, { format: 'markdown', text: '## Subjective\nHeadache.' });
    assert.equal(note.status, null);
    const ambient = (await get(pathFor('getDocument', given.world, { document: given.world.ambient }))).body
      .document;
    assert.equal('content' in ambient, false);
    assert.equal(ambient.schema_type, 'ambient_transcript');
    assert.equal(ambient.status, 'completed');
  });

  test('happy: transcript returns ordered finalized turns', async () => {
    const r = await get(pathFor('getTranscript', given.world));
    assert.deepEqual(r.body, {
      encounter_id: given.world.encounter,
      document_id: given.world.ambient,
      transcript: {
        provider: 'example-asr',
        audio_duration_seconds: 612.4,
        turns: [
          { speaker: 'clinician', start: 0, end: 3.2, text: 'Good morning.' },
          { speaker: 'patient', start: 3.4, end: 6.1, text: 'Morning, doctor.' },
        ],
      },
    });
  });

  test('happy: audio link is a URL with an expiry about five minutes ahead', async () => {
    const before = Date.now();
    const r = await get(pathFor('getAudio', given.world));
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(Object.keys(r.body).sort(), ['audio_url', 'expires_at']);
    assert.match(r.body.expires_at, ISO_MS);
    const ttl = Date.parse(r.body.expires_at) - before;
    assert.ok(ttl > 290_000 && ttl <= 301_000, `ttl ${ttl}`);
    assert.ok(new URL(r.body.audio_url).protocol.startsWith('http'));
  });

  for (const route of ['getEncounter', 'getDocument', 'getTranscript', 'getAudio'] as const) {
    test(`security: ${route} → encounter_not_found, cross_organization_denied, demo_training_denied`, async () => {
      assert.equal(
        await code(pathFor(route, given.world, { encounter: 'enc_nope' })),
        '404 encounter_not_found',
      );
      assert.equal(
        await code(
          pathFor(route, given.world, { encounter: given.world.encounterB, document: given.world.noteB }),
        ),
        '403 cross_organization_denied',
      );
      assert.equal(
        await code(
          pathFor(route, given.world, {
            encounter: given.world.demoEncounter,
            document: given.world.demoNote,
          }),
        ),
        '403 demo_training_denied',
      );
      // The other organization's key sees organization A's encounter as another organization's.
      assert.equal(
        await code(pathFor(route, given.world), given.world.tokenB),
        '403 cross_organization_denied',
      );
    });
  }

  for (const route of ['getDocument', 'getTranscript', 'getAudio'] as const) {
    test(`error: ${route} → document_not_found for an unknown document or one of another encounter`, async () => {
      assert.equal(
        await code(pathFor(route, given.world, { document: 'doc_nope' })),
        '404 document_not_found',
      );
      assert.equal(
        await code(pathFor(route, given.world, { document: given.world.otherNote })),
        '404 document_not_found',
      );
      assert.equal(
        await code(pathFor(route, given.world, { document: given.world.noteB })),
        '404 document_not_found',
      );
    });
  }

  test('error: unsupported_document_type where the route does not serve the type', async () => {
    assert.equal(
      await code(pathFor('getDocument', given.world, { document: given.world.internal })),
      '400 unsupported_document_type',
    );
    for (const route of ['getTranscript', 'getAudio'] as const) {
      assert.equal(
        await code(pathFor(route, given.world, { document: given.world.note })),
        '400 unsupported_document_type',
      );
      assert.equal(
        await code(pathFor(route, given.world, { document: given.world.internal })),
        '400 unsupported_document_type',
      );
    }
  });

  test('error: transcript_not_found when the transcript is not finalized or absent', async () => {
    assert.equal(
      await code(pathFor('getTranscript', given.world, { document: given.world.unfinalized })),
      '404 transcript_not_found',
    );
    assert.equal(
      await code(pathFor('getTranscript', given.world, { document: given.world.bare })),
      '404 transcript_not_found',
    );
  });

  test('error: audio_not_available_for_document without a recording, audio_not_found when its object is gone', async () => {
    assert.equal(
      await code(pathFor('getAudio', given.world, { document: given.world.bare })),
      '400 audio_not_available_for_document',
    );
    assert.equal(
      await code(pathFor('getAudio', given.world, { document: given.world.missingAudio })),
      '404 audio_not_found',
    );
  });

  test('error: IDs of any characters or length are compared exactly and answer 404, never 5xx', async () => {
    const odd = [
      'x'.repeat(4000),
      '%00',
      'enc_%E2%80%8B',
      "1'%20OR%201=1--",
      '..%2F..%2Fetc',
      // Array-literal syntax (PostgreSQL's audit insert sends each column as one array).
      'NULL',
      '%7B%22a%5C%22%2C%7D',
      given.world.encounter.toUpperCase(),
      `${given.world.encounter}%20`,
    ];
    for (const id of odd) {
      assert.equal(await code(`/external/v1/encounters/${id}`), '404 encounter_not_found', id.slice(0, 40));
    }
    const audited = await given.server.services.store.db
      .selectFrom('audit_log')
      .select('encounter_id')
      .where('encounter_id', 'in', ['NULL', '{"a\\",}'])
      .execute();
    assert.deepEqual(audited.map((r) => r.encounter_id).sort(), ['NULL', '{"a\\",}'], 'audited as sent');
  });
});

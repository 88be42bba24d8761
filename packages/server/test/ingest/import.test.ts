import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type KyselyPlugin, sql } from 'kysely';
import { importNdjsonFile } from '../../src/ingest/importFile.js';
import { ImportRejectedError } from '../../src/ingest/problems.js';
import type { Services } from '../../src/services.js';
import { upsertEncounters } from '../../src/store/clinicalWrites.js';
import { createCommandServices } from '../support/cli.js';
import { forEachStore } from '../support/stores.js';
import { waitFor } from '../support/waitFor.js';
import { exampleLines, type Line, writeBeside, writeImportFile } from './importFiles.js';

const WAV = Buffer.from('RIFF\u0024\u0000\u0000\u0000WAVEfmt test-audio', 'latin1');

forEachStore('eds import', (kind) => {
  let services: Services;
  let close: () => Promise<void>;
  let mediaDir: string;
  let n = 0;
  const unique = () => `_${kind}_${++n}`;

  before(async () => {
    const created = await createCommandServices(kind);
    services = created.services;
    close = created.close;
    mediaDir = join(created.database.dir, 'media');
  });
  after(() => close());

  const db = () => services.store.db;
  const eventsFor = (documentId: string) =>
    db().selectFrom('webhook_events').selectAll().where('document_id', '=', documentId).execute();
  /** Everything an import writes about one organization, in a stable order. */
  async function snapshot(org: string) {
    const q = db();
    return {
      organizations: await q.selectFrom('organizations').selectAll().where('id', '=', org).execute(),
      patients: await q
        .selectFrom('patients')
        .selectAll()
        .where('organization_id', '=', org)
        .orderBy('id')
        .execute(),
      encounters: await q
        .selectFrom('encounters')
        .selectAll()
        .where('organization_id', '=', org)
        .orderBy('id')
        .execute(),
      documents: await q
        .selectFrom('documents')
        .selectAll()
        .where('organization_id', '=', org)
        .orderBy('id')
        .execute(),
      transcripts: await q
        .selectFrom('transcripts')
        .innerJoin('documents', 'documents.id', 'transcripts.document_id')
        .selectAll('transcripts')
        .where('documents.organization_id', '=', org)
        .orderBy('transcripts.document_id')
        .execute(),
      recordings: await q
        .selectFrom('recordings')
        .innerJoin('documents', 'documents.id', 'recordings.document_id')
        .selectAll('recordings')
        .where('documents.organization_id', '=', org)
        .orderBy('recordings.document_id')
        .execute(),
      dayCounts: await q
        .selectFrom('encounter_day_counts')
        .selectAll()
        .where('organization_id', '=', org)
        .orderBy('day')
        .execute(),
      hourCounts: await q
        .selectFrom('encounter_hour_counts')
        .selectAll()
        .where('organization_id', '=', org)
        .orderBy('hour')
        .execute(),
      total: await q.selectFrom('encounter_counts').selectAll().where('organization_id', '=', org).execute(),
      events: await q
        .selectFrom('webhook_events')
        .select(['id', 'document_id'])
        .where('organization_id', '=', org)
        .orderBy('id')
        .execute(),
    };
  }
  async function rejected(file: string): Promise<ImportRejectedError> {
    const error = await importNdjsonFile(services, file).then(
      () => assert.fail('the import should have been refused'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof ImportRejectedError, String(error));
    return error;
  }

  test('the documented example imports, in any line order, with its audio and one transcript_ready event', async () => {
    const { ids, lines } = exampleLines(unique());
    // References before the records they point at: the file's order must not matter.
    const file = writeImportFile([...lines].reverse());
    writeBeside(file, 'recordings/doc_2.wav', WAV);
    const result = await importNdjsonFile(services, file);
    assert.deepEqual(result, {
      imported: { organization: 1, patient: 1, encounter: 1, document: 2, transcript_ready_events: 1 },
    });
    const state = await snapshot(ids.org);
    assert.equal(state.organizations[0]?.allowlisted, 1);
    assert.equal(state.encounters[0]?.created_at, Date.parse('2026-05-01T15:00:00Z'));
    assert.deepEqual(
      state.documents.map((d) => [d.id, d.organization_id, d.content_text]),
      [
        [ids.note, ids.org, '## Subjective\n...'],
        [ids.ambient, ids.org, null],
      ],
    );
    assert.equal(state.transcripts[0]?.finalized, 1);
    assert.deepEqual(JSON.parse(state.transcripts[0]!.turns), [
      { speaker: 'clinician', start: 0, end: 3.2, text: 'Good morning.' },
    ]);
    const recording = state.recordings[0]!;
    assert.equal(recording.byte_size, WAV.length);
    assert.ok(await services.media.exists(recording.object_key));
    assert.deepEqual(readFileSync(join(mediaDir, recording.object_key)), WAV);
    assert.deepEqual(
      state.dayCounts.map((d) => d.count),
      [1],
    );
    assert.deepEqual(
      state.hourCounts.map((h) => [h.hour, h.count]),
      [[Date.parse('2026-05-01T15:00:00Z') / 3_600_000, 1]],
    );

    const events = await eventsFor(ids.ambient);
    assert.equal(events.length, 1);
    const body = JSON.parse(events[0]!.body);
    assert.equal(body.type, 'recording.transcript_ready');
    assert.equal(body.organization_id, ids.org);
    assert.deepEqual(body.resources, { encounter_id: ids.enc, document_id: ids.ambient });
  });

  test('the example file of docs/import.md (examples/import/clinic.ndjson) imports with its recording', async () => {
    const example = join(import.meta.dirname, '../../../../examples/import/clinic.ndjson');
    const result = await importNdjsonFile(services, example);
    assert.deepEqual(result, {
      imported: { organization: 1, patient: 2, encounter: 2, document: 3, transcript_ready_events: 1 },
    });
    const state = await snapshot('org_ExampleNorthHarbourFP');
    const recording = state.recordings[0]!;
    assert.ok(await services.media.exists(recording.object_key));
    assert.deepEqual(
      readFileSync(join(mediaDir, recording.object_key)),
      readFileSync(join(example, '../recordings/doc_Ex2AmbientVisitRecording.wav')),
    );
  });

  test('two imports into one organization at once both land, and its list total counts each encounter once', async () => {
    const suffix = unique();
    const org = `org_c${suffix}`;
    const organization = {
      kind: 'organization',
      id: org,
      name: 'C',
      allowlisted: true,
      routes: ['encounters'],
      api_keys_enabled: true,
    };
    // Stored first: files that name it would each lock its row and so wait for each other.
    await importNdjsonFile(services, writeImportFile([organization]));
    const fileOf = (part: string) =>
      writeImportFile([
        {
          kind: 'patient',
          id: `pat_${part}${suffix}`,
          organization_id: org,
          first_name: 'A',
          last_name: 'B',
          date_of_birth: '1980-01-01',
        },
        // Three statements of encounters each (400 rows a statement), on the same seven days.
        ...Array.from({ length: 900 }, (_, i) => {
          // Each statement's days: x's first are 0-2 and y's 6-4, and each then reaches into the other's.
          const day = part === 'x' ? Math.floor(i / 134) : 6 - Math.floor(i / 134);
          return {
            kind: 'encounter',
            id: `enc_${part}${i}${suffix}`,
            organization_id: org,
            patient_id: `pat_${part}${suffix}`,
            encounter_type: 'ambient',
            status: 'completed',
            date_of_service: `2026-05-0${day + 1}T09:00:00Z`,
            created_at: `2026-05-0${day + 1}T10:00:00Z`,
            updated_at: `2026-05-0${day + 1}T10:00:00Z`,
            demo_training: false,
          };
        }),
      ]);
    const [x, y] = await Promise.all([
      importNdjsonFile(services, fileOf('x')),
      importNdjsonFile(services, fileOf('y')),
    ]);
    assert.equal(x.imported.encounter + y.imported.encounter, 1800);
    const total = await db()
      .selectFrom('encounter_counts')
      .select('count')
      .where('organization_id', '=', org)
      .executeTakeFirst();
    const days = await db()
      .selectFrom('encounter_day_counts')
      .select('count')
      .where('organization_id', '=', org)
      .execute();
    const hours = await db()
      .selectFrom('encounter_hour_counts')
      .select('count')
      .where('organization_id', '=', org)
      .execute();
    assert.equal(Number(total?.count), 1800);
    assert.equal(
      days.reduce((sum, d) => sum + Number(d.count), 0),
      1800,
    );
    assert.equal(
      hours.reduce((sum, h) => sum + Number(h.count), 0),
      1800,
    );
  });

  test("an import waits for another transaction writing its organization's encounters, then counts from what that committed", async (t) => {
    if (kind !== 'postgres') return t.skip('one SQLite connection runs one transaction at a time');
    const suffix = unique();
    const org = `org_w${suffix}`;
    const patient = `pat_w${suffix}`;
    await importNdjsonFile(
      services,
      writeImportFile([
        {
          kind: 'organization',
          id: org,
          name: 'W',
          allowlisted: true,
          routes: ['encounters'],
          api_keys_enabled: true,
        },
        {
          kind: 'patient',
          id: patient,
          organization_id: org,
          first_name: 'A',
          last_name: 'B',
          date_of_birth: '1980-01-01',
        },
      ]),
    );
    const encounters = Array.from({ length: 450 }, (_, i) => ({
      id: `enc_w${i}${suffix}`,
      day: 1 + (i % 3),
    }));
    // Transaction A writes the encounters and holds its locks until the test lets it commit.
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let written = false;
    const a = db()
      .transaction()
      .execute(async (tx) => {
        await upsertEncounters(
          tx,
          encounters.map(({ id, day }) => ({
            id,
            organization_id: org,
            patient_id: patient,
            encounter_type: 'ambient',
            status: 'completed',
            date_of_service: Date.UTC(2026, 4, day, 9),
            created_at: Date.UTC(2026, 4, day, 10),
            updated_at: Date.UTC(2026, 4, day, 10),
            demo_training: 0 as const,
          })),
        );
        written = true;
        await released;
      });
    await waitFor(() => written, 'transaction A writing its encounters');
    // B imports the same encounters while A is open: it must wait, then see them as existing.
    const b = importNdjsonFile(
      services,
      writeImportFile(
        encounters.map(({ id, day }) => ({
          kind: 'encounter',
          id,
          organization_id: org,
          patient_id: patient,
          encounter_type: 'ambient',
          status: 'completed',
          date_of_service: `2026-05-0${day}T09:00:00Z`,
          created_at: `2026-05-0${day}T10:00:00Z`,
          updated_at: `2026-05-0${day}T10:00:00Z`,
          demo_training: false,
        })),
      ),
    );
    await waitFor(async () => {
      const { rows } = await sql<{ n: string }>`select count(*) as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock'`.execute(db());
      return Number(rows[0]?.n) > 0;
    }, 'the import waiting for transaction A');
    release();
    await a;
    assert.equal((await b).imported.encounter, 450);
    const { total, dayCounts, hourCounts } = await snapshot(org);
    assert.deepEqual(
      total.map((row) => Number(row.count)),
      [450],
    );
    assert.equal(
      dayCounts.reduce((sum, d) => sum + Number(d.count), 0),
      450,
    );
    assert.equal(
      hourCounts.reduce((sum, h) => sum + Number(h.count), 0),
      450,
    );
  });

  test('text holding U+2028 and U+2029 (left unescaped by JSON) imports whole, each record on its own line', async () => {
    const { ids, lines } = exampleLines(unique());
    const text = '## Plan\u2028Follow up in two weeks.\u2029Call if worse.\r\nDone.';
    const withSeparators = lines.map((line) =>
      line.kind === 'document' && line.schema_type === 'document'
        ? { ...line, content: { format: 'markdown', text } }
        : line,
    );
    // \r\n line ends too, as files written on Windows have them.
    const file = writeImportFile([]);
    writeFileSync(file, `${withSeparators.map((l) => JSON.stringify(l)).join('\r\n')}\r\n`);
    assert.match(readFileSync(file, 'utf8'), /\u2028/, 'the separators are raw in the file');
    writeBeside(file, 'recordings/doc_2.wav', WAV);
    const result = await importNdjsonFile(services, file);
    assert.equal(result.imported.encounter, 1);
    const stored = await db()
      .selectFrom('documents')
      .select('content_text')
      .where('id', '=', ids.note)
      .executeTakeFirstOrThrow();
    assert.equal(stored.content_text, text);
  });

  test('re-importing the same file leaves the same state and emits no new event', async () => {
    const { ids, lines } = exampleLines(unique());
    const file = writeImportFile(lines);
    writeBeside(file, 'recordings/doc_2.wav', WAV);
    await importNdjsonFile(services, file);
    const first = await snapshot(ids.org);
    const again = await importNdjsonFile(services, file);
    assert.equal(again.imported.transcript_ready_events, 0);
    const second = await snapshot(ids.org);
    // Organizations and patients carry no timestamps in the file: those are the import's time.
    const withoutUpdatedAt = <T extends { updated_at: number }>(rows: T[]) =>
      rows.map(({ updated_at, ...rest }) => rest);
    assert.deepEqual(withoutUpdatedAt(second.organizations), withoutUpdatedAt(first.organizations));
    assert.deepEqual(withoutUpdatedAt(second.patients), withoutUpdatedAt(first.patients));
    const { organizations: _o1, patients: _p1, ...rest1 } = first;
    const { organizations: _o2, patients: _p2, ...rest2 } = second;
    assert.deepEqual(rest2, rest1);
  });

  test("a re-import moving an encounter to another hour of its day moves its hour's count, and its day's stays", async () => {
    const { ids, lines } = exampleLines(unique());
    const file = writeImportFile(lines);
    writeBeside(file, 'recordings/doc_2.wav', WAV);
    await importNdjsonFile(services, file);
    const moved = lines.map((line) =>
      typeof line === 'object' && line.kind === 'encounter'
        ? { ...line, created_at: '2026-05-01T09:30:00Z' }
        : line,
    );
    const movedFile = writeImportFile(moved);
    writeBeside(movedFile, 'recordings/doc_2.wav', WAV);
    await importNdjsonFile(services, movedFile);
    const state = await snapshot(ids.org);
    assert.deepEqual(
      state.dayCounts.map((d) => [d.day, d.count]),
      [[Date.parse('2026-05-01T00:00:00Z') / 86_400_000, 1]],
    );
    assert.deepEqual(
      state.hourCounts.filter((h) => h.count !== 0).map((h) => [h.hour, h.count]),
      [[Date.parse('2026-05-01T09:00:00Z') / 3_600_000, 1]],
    );
  });

  test('transcript_ready is emitted once per transition to finalized, never for a re-import', async () => {
    const suffix = unique();
    const draft = exampleLines(suffix, { finalized: false });
    const final = exampleLines(suffix, { finalized: true });
    const write = (lines: Line[]) => {
      const file = writeImportFile(lines);
      writeBeside(file, 'recordings/doc_2.wav', WAV);
      return file;
    };
    const counts: number[] = [];
    for (const lines of [draft.lines, draft.lines, final.lines, final.lines, draft.lines, final.lines]) {
      counts.push((await importNdjsonFile(services, write(lines))).imported.transcript_ready_events);
    }
    assert.deepEqual(counts, [0, 0, 1, 0, 0, 1]);
    assert.equal((await eventsFor(final.ids.ambient)).length, 2);
  });

  test('every bad line is reported with its line number and reason, and nothing is written', async () => {
    const { ids, lines } = exampleLines(unique());
    const [org, patient, encounter, note, ambient] = lines as [
      Line,
      Line,
      Line,
      Line,
      Record<string, unknown>,
    ];
    const file = writeImportFile([
      org,
      '{"kind":"patient", oops',
      { kind: 'prescription', id: 'rx_1' },
      { ...(patient as object), date_of_birth: '1981-02-29', first_name: 42 },
      '',
      { ...(encounter as object), created_at: '2026-05-01T15:00:00' },
      { ...(note as object), id: `${ids.note}_x`, status: 'final', content: { format: 'html', text: '<p>' } },
      { ...ambient, content: { format: 'markdown', text: 'x' }, audio: null },
      { ...(note as object), transcript: { finalized: true }, updated_at: 'yesterday' },
      note,
      note,
    ]);
    const error = await rejected(file);
    const byLine = new Map<number, string[]>();
    for (const p of error.problems) byLine.set(p.line, [...(byLine.get(p.line) ?? []), p.message]);
    assert.deepEqual([...byLine.keys()], [2, 3, 4, 6, 7, 8, 9, 11]);
    assert.match(byLine.get(2)!.join(), /not valid JSON/);
    assert.match(byLine.get(3)!.join(), /unknown kind "prescription"/);
    assert.match(byLine.get(4)!.join(), /date_of_birth must be a calendar date/);
    assert.match(byLine.get(4)!.join(), /first_name must be a non-empty string/);
    assert.match(byLine.get(6)!.join(), /created_at must be an RFC 3339 date-time with an offset/);
    assert.match(byLine.get(7)!.join(), /status must be null for schema_type document/);
    assert.match(byLine.get(7)!.join(), /content.format must be "markdown"/);
    assert.match(byLine.get(8)!.join(), /content belongs to schema_type document only/);
    assert.match(byLine.get(9)!.join(), /transcript belongs to schema_type ambient_transcript only/);
    assert.match(byLine.get(9)!.join(), /updated_at must be an RFC 3339/);
    assert.match(byLine.get(11)!.join(), /duplicate document id .* \(first on line 10\)/);
    assert.match(error.message, /nothing was written/);
    assert.match(error.message, /line 2: not valid JSON/);
    assert.deepEqual(await snapshot(ids.org), await snapshot('no such org'));
  });

  test('references resolve over the file and the database; dangling or cross-organization ones are refused', async () => {
    const { ids, lines } = exampleLines(unique());
    const file = writeImportFile(lines.slice(0, 3));
    await importNdjsonFile(services, file);
    const other = `org_b${unique()}`;

    // Pointing at records that exist only in the database works.
    const later = writeImportFile([lines[3]!]);
    assert.equal((await importNdjsonFile(services, later)).imported.document, 1);

    const bad = writeImportFile([
      { kind: 'organization', id: other, name: 'Clinic B' },
      {
        kind: 'patient',
        id: `pat_x${unique()}`,
        organization_id: 'org_nowhere',
        first_name: 'A',
        last_name: 'B',
        date_of_birth: '1990-01-01',
      },
      { ...lines[2]!, id: `enc_x${unique()}`, patient_id: 'pat_nowhere' },
      { ...lines[2]!, id: `enc_y${unique()}`, organization_id: other },
      { ...lines[3]!, id: `doc_x${unique()}`, encounter_id: 'enc_nowhere' },
    ]);
    assert.deepEqual(
      (await rejected(bad)).problems.map((p) => `${p.line}: ${p.message}`),
      [
        '2: organization_id "org_nowhere" exists neither in the file nor in the database',
        '3: patient_id "pat_nowhere" exists neither in the file nor in the database',
        `4: patient ${ids.pat} belongs to organization ${ids.org}, not to the encounter's organization ${other}`,
        '5: encounter_id "enc_nowhere" exists neither in the file nor in the database',
      ],
    );
    const move = writeImportFile([
      { kind: 'organization', id: other, name: 'Clinic B' },
      { ...lines[1]!, organization_id: other },
    ]);
    assert.deepEqual(
      (await rejected(move)).problems.map((p) => `${p.line}: ${p.message}`),
      [
        `2: patient ${ids.pat} belongs to organization ${ids.org} in the database; an import cannot move it to ${other}`,
      ],
    );
    assert.deepEqual(
      await db().selectFrom('organizations').select('id').where('id', '=', other).execute(),
      [],
    );
  });

  test('one pass reports field errors and dangling references together, each with its line', async () => {
    const { lines } = exampleLines(unique());
    const [org, patient, encounter, note] = lines as Record<string, unknown>[];
    const file = writeImportFile([
      org!,
      { ...patient!, date_of_birth: 'not a date' },
      // A bad field and a dangling reference on one line: both are reported now.
      { ...encounter!, status: 7, patient_id: 'pat_nowhere' },
      { ...note!, id: `doc_z${unique()}`, created_at: 'yesterday', encounter_id: 'enc_nowhere' },
      { ...patient!, id: `pat_z${unique()}`, first_name: '', organization_id: 'org_nowhere' },
      { ...note!, id: `doc_y${unique()}`, encounter_id: 'enc_elsewhere' },
    ]);
    const problems = (await rejected(file)).problems.map((p) => `${p.line}: ${p.message}`);
    const on = (line: number) => problems.filter((p) => p.startsWith(`${line}: `));
    assert.equal(on(2).length, 1);
    assert.match(on(2)[0]!, /date_of_birth must be a calendar date/);
    assert.equal(on(3).length, 2, problems.join('\n'));
    assert.match(on(3).join(), /status must be/);
    assert.match(on(3).join(), /patient_id "pat_nowhere" exists neither in the file nor in the database/);
    assert.match(on(4).join(), /created_at must be an RFC 3339/);
    assert.match(on(4).join(), /encounter_id "enc_nowhere" exists neither/);
    assert.match(on(5).join(), /first_name must be a non-empty string/);
    assert.match(on(5).join(), /organization_id "org_nowhere" exists neither/);
    assert.deepEqual(on(6), [
      '6: encounter_id "enc_elsewhere" exists neither in the file nor in the database',
    ]);
    // The patient refused on line 2 still counts as defined: line 3 is not told it is missing.
    assert.ok(!problems.some((p) => p.includes(String(patient!.id))), problems.join('\n'));
  });

  test('audio must be a file inside the import folder; missing:true records an absent object; no audio removes it', async () => {
    const { ids, lines } = exampleLines(unique());
    const ambient = lines[4]!;
    const outside = writeImportFile([
      ...lines.slice(0, 4),
      { ...ambient, audio: { path: '../outside.wav' } },
    ]);
    writeBeside(outside, '../outside.wav', WAV);
    const absent = writeImportFile([...lines.slice(0, 4), { ...ambient, audio: { path: 'nope.wav' } }]);
    const absolute = writeImportFile([
      ...lines.slice(0, 4),
      { ...ambient, audio: { path: writeBeside(outside, 'abs.wav', WAV) } },
    ]);
    assert.match(
      (await rejected(outside)).message,
      /line 5: audio.path "..\/outside.wav" escapes the import file's folder/,
    );
    assert.match((await rejected(absent)).message, /line 5: audio.path "nope.wav" does not exist/);
    assert.match((await rejected(absolute)).message, /must be relative to the import file's folder/);

    const missing = writeImportFile([...lines.slice(0, 4), { ...ambient, audio: { missing: true } }]);
    await importNdjsonFile(services, missing);
    const [recording] = (await snapshot(ids.org)).recordings;
    assert.ok(recording);
    assert.equal(await services.media.exists(recording.object_key), false);

    const none = writeImportFile([...lines.slice(0, 4), { ...ambient, audio: null }]);
    await importNdjsonFile(services, none);
    assert.deepEqual((await snapshot(ids.org)).recordings, []);
  });

  test('a failure in the middle of writing leaves nothing behind', async () => {
    const { ids, lines } = exampleLines(unique());
    const file = writeImportFile(lines);
    writeBeside(file, 'recordings/doc_2.wav', WAV);
    // Fails the transcript write, after organizations, patients, encounters and documents.
    const failTranscripts: KyselyPlugin = {
      transformQuery(args) {
        const node = args.node as { kind: string; into?: { table: { identifier: { name: string } } } };
        if (node.kind === 'InsertQueryNode' && node.into?.table.identifier.name === 'transcripts') {
          throw new Error('simulated failure mid-import');
        }
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    const failing: Services = {
      ...services,
      store: { ...services.store, db: services.store.db.withPlugin(failTranscripts) },
    };
    await assert.rejects(importNdjsonFile(failing, file), /simulated failure mid-import/);
    const empty = await snapshot('no such org');
    assert.deepEqual(await snapshot(ids.org), empty);
  });
});

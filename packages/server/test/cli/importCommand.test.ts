import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Store } from '../../src/database/connection.js';
import { exampleLines, writeBeside, writeImportFile } from '../ingest/importFiles.js';
import { cliEnv, edsJson, runEds } from '../support/cli.js';
import { createTestStore, type TestDatabase } from '../support/stores.js';

// The command's own behaviour; the importer itself runs on both stores in test/ingest.
describe('eds import (command)', () => {
  const kind = 'sqlite';
  let store: Store & { database: TestDatabase };
  let env: Record<string, string>;
  const tableSizes = async () => {
    const sizes: Record<string, number> = {};
    for (const table of [
      'organizations',
      'patients',
      'encounters',
      'documents',
      'transcripts',
      'recordings',
      'webhook_events',
    ] as const) {
      sizes[table] = (
        await store.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n;
    }
    return sizes;
  };

  before(async () => {
    store = await createTestStore(kind);
    env = cliEnv(store.database);
  });
  after(() => store.close());

  test('prints the counts of what it imported', async () => {
    const { lines } = exampleLines(`_cli_${kind}`);
    const file = writeImportFile(lines);
    writeBeside(file, 'recordings/doc_2.wav', 'RIFF....WAVE');
    assert.deepEqual(await edsJson(['import', file], env), {
      imported: { organization: 1, patient: 1, encounter: 1, document: 2, transcript_ready_events: 1 },
    });
    assert.equal((await tableSizes()).encounters, 1);
  });

  test('a bad file exits 1, lists every bad line on stderr, prints nothing on stdout and writes nothing', async () => {
    const { lines } = exampleLines(`_bad_${kind}`);
    const bad = Array.from({ length: 60 }, (_, i) => ({
      ...lines[1]!,
      id: `pat_bad_${i}`,
      date_of_birth: '1980-13-01',
    }));
    const file = writeImportFile([...lines.slice(0, 4), '{not json', ...bad]);
    const before = await tableSizes();
    const result = await runEds(['import', file], env);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /import refused, nothing was written: 61 problems in /);
    assert.match(result.stderr, /line 5: not valid JSON/);
    assert.match(
      result.stderr,
      /line 6: date_of_birth must be a calendar date YYYY-MM-DD \(got "1980-13-01"\)/,
    );
    assert.match(result.stderr, /… and 11 more/);
    assert.equal(result.stderr.match(/^ {2}line \d+:/gm)?.length, 50);
    assert.doesNotMatch(result.stderr, /\n\s+at /);
    assert.deepEqual(await tableSizes(), before);
  });

  test('a file that does not exist is a clear error', async () => {
    const result = await runEds(['import', '/nonexistent/data.ndjson'], env);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /\/nonexistent\/data.ndjson is not a readable file/);
  });
});

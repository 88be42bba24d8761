/**
 * The real finalization path: an `eds import` that finalizes an ambient transcript writes the
 * event and a pending delivery for every eligible subscription, in the import's transaction.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { cliEnv, edsJson } from '../support/cli.js';
import { forEachStore } from '../support/stores.js';
import { createHarness, FAST_WEBHOOK_ENV, type Harness } from './support/harness.js';

forEachStore('import emits deliveries', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind);
  });
  after(() => h.close());

  test('happy: `eds import` finalizing a transcript creates one event and one pending delivery per eligible subscription', async () => {
    const { id: subscription } = await h.subscribe('http://127.0.0.1:9/hooks');
    await h.subscribe('http://127.0.0.1:9/other', { correlation: 'not_confirmed_runtime_blocked' });
    const encounter = await h.fixtures.encounter(h.org);
    const line = (finalized: boolean) =>
      JSON.stringify({
        kind: 'document',
        id: `doc_import_${kind}`,
        encounter_id: encounter,
        schema_type: 'ambient_transcript',
        title: 'Visit recording',
        status: 'completed',
        workflow_variant: 'ambient',
        created_at: '2026-05-01T15:00:30Z',
        updated_at: '2026-05-01T15:04:00Z',
        audio_duration_seconds: 3.5,
        transcript: {
          finalized,
          provider: 'example-asr',
          audio_duration_seconds: 3.5,
          turns: [{ speaker: 'clinician', start: 0, end: 1.5, text: 'Good morning.' }],
        },
      });
    const file = join(h.database.dir, 'finalize.ndjson');
    const env = cliEnv(h.database, FAST_WEBHOOK_ENV);
    writeFileSync(file, `${line(false)}\n`);
    const draft = await edsJson<{ imported: { transcript_ready_events: number } }>(['import', file], env);
    assert.equal(draft.imported.transcript_ready_events, 0);
    writeFileSync(file, `${line(true)}\n`);
    const final = await edsJson<{ imported: { transcript_ready_events: number } }>(['import', file], env);
    assert.equal(final.imported.transcript_ready_events, 1);

    const events = await h.services.store.db
      .selectFrom('webhook_events')
      .selectAll()
      .where('document_id', '=', `doc_import_${kind}`)
      .execute();
    assert.equal(events.length, 1);
    const deliveries = await h.deliveries(events[0]!.id);
    assert.equal(deliveries.length, 1, 'only the eligible subscription gets a delivery');
    assert.equal(deliveries[0]!.subscription_id, subscription);
    assert.equal(deliveries[0]!.status, 'pending');
  });
});

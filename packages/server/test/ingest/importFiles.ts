/** NDJSON import files for tests: the operator-interface example, and a writer for any lines. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { scratchDir } from '../support/scratchDir.js';

export type Line = Record<string, unknown> | string;

/** Writes lines (objects are JSON-encoded, strings written as they are) to a new folder. */
export function writeImportFile(lines: readonly Line[], dir = scratchDir('import-')): string {
  const path = join(dir, 'data.ndjson');
  writeFileSync(path, `${lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n')}\n`);
  return path;
}

export function writeBeside(importFile: string, relative: string, bytes: Buffer | string): string {
  const path = join(dirname(importFile), relative);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, bytes);
  return path;
}

/** The example of operator-interface.md, with ids made unique per test. */
export function exampleLines(suffix: string, transcript: { finalized: boolean } = { finalized: true }) {
  const org = `org_a${suffix}`;
  const pat = `pat_1${suffix}`;
  const enc = `enc_1${suffix}`;
  return {
    ids: { org, pat, enc, note: `doc_1${suffix}`, ambient: `doc_2${suffix}` },
    lines: [
      {
        kind: 'organization',
        id: org,
        name: 'Clinic A',
        allowlisted: true,
        routes: ['encounters', 'documents'],
        api_keys_enabled: true,
      },
      {
        kind: 'patient',
        id: pat,
        organization_id: org,
        first_name: 'Ana',
        last_name: 'Silva',
        date_of_birth: '1980-02-29',
      },
      {
        kind: 'encounter',
        id: enc,
        organization_id: org,
        patient_id: pat,
        encounter_type: 'ambient',
        status: 'completed',
        date_of_service: '2026-05-01T14:00:00Z',
        created_at: '2026-05-01T15:00:00Z',
        updated_at: '2026-05-01T15:05:00Z',
        demo_training: false,
      },
      {
        kind: 'document',
        id: `doc_1${suffix}`,
        encounter_id: enc,
        schema_type: 'document',
        title: 'SOAP note',
        status: null,
        workflow_variant: null,
        created_at: '2026-05-01T15:01:00Z',
        updated_at: '2026-05-01T15:02:00Z',
        content: { format: 'markdown', text: '## Subjective\n...' },
      },
      {
        kind: 'document',
        id: `doc_2${suffix}`,
        encounter_id: enc,
        schema_type: 'ambient_transcript',
        title: 'Visit recording',
        status: 'completed',
        workflow_variant: 'ambient',
        created_at: '2026-05-01T15:00:30Z',
        updated_at: '2026-05-01T15:04:00Z',
        audio_duration_seconds: 612.4,
        transcript: {
          finalized: transcript.finalized,
          provider: 'example-asr',
          audio_duration_seconds: 612.4,
          turns: [{ speaker: 'clinician', start: 0.0, end: 3.2, text: 'Good morning.' }],
        },
        audio: { path: 'recordings/doc_2.wav', content_type: 'audio/wav' },
      },
    ] as Record<string, unknown>[],
  };
}

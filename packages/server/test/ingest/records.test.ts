import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseImportLine } from '../../src/ingest/records.js';
import { exampleLines } from './importFiles.js';

const { lines } = exampleLines('');
const [organization, , , note, ambient] = lines as Record<string, unknown>[];
const reasons = (value: unknown) => {
  const parsed = parseImportLine(typeof value === 'string' ? value : JSON.stringify(value));
  return parsed.ok ? [] : parsed.reasons;
};

test('every line of the documented example is accepted', () => {
  for (const line of lines) assert.deepEqual(reasons(line), [], JSON.stringify(line));
});

test('organization settings are optional: not allowlisted, no routes, API keys on', () => {
  const parsed = parseImportLine('{"kind":"organization","id":"org_x","name":"X"}');
  assert.ok(parsed.ok);
  assert.deepEqual(parsed.record, {
    kind: 'organization',
    id: 'org_x',
    name: 'X',
    allowlisted: false,
    routes: [],
    apiKeysEnabled: true,
    createdAt: undefined,
    updatedAt: undefined,
  });
});

test('a misspelt or unknown field is refused rather than silently dropped', () => {
  assert.deepEqual(reasons({ ...organization, allowlistd: true }), ['unknown field allowlistd']);
  assert.deepEqual(reasons({ ...organization, routes: ['billing'] }), [
    'routes must be a list of route groups (encounters, documents) (got ["billing"])',
  ]);
});

test('timestamps need an offset and must exist; dates must exist', () => {
  const bad = [
    '2026-05-01T15:01:00',
    '2026-02-30T10:00:00Z',
    '2026-05-01',
    '2026-05-01T24:00:00Z',
    1714575660000,
  ];
  for (const value of bad) assert.equal(reasons({ ...note, created_at: value }).length, 1, String(value));
  assert.deepEqual(reasons({ ...note, created_at: '2026-05-01T17:01:00.123+02:00' }), []);
});

test('a finalized transcript needs provider, duration and well-ordered turns', () => {
  const transcript = { finalized: true, turns: [{ speaker: 'clinician', start: 5, end: 2, text: 'Hi' }] };
  const found = reasons({ ...ambient, transcript });
  assert.deepEqual(found, [
    'transcript.provider must be a non-empty string (got missing)',
    'transcript.audio_duration_seconds must be a number of at least 0 (got missing)',
    'transcript.turns[0].end is before its start',
  ]);
  assert.deepEqual(reasons({ ...ambient, transcript: { finalized: false } }), []);
  assert.deepEqual(reasons({ ...ambient, transcript: { finalized: 'yes' } }), [
    'transcript.finalized must be true or false (got "yes")',
  ]);
});

test('audio is a path with a known or given audio type, missing:true, or null', () => {
  assert.deepEqual(reasons({ ...ambient, audio: { path: 'a.mp3' } }), []);
  assert.deepEqual(reasons({ ...ambient, audio: { path: 'a.bin' } }), [
    'audio.content_type is required for "a.bin"',
  ]);
  assert.deepEqual(reasons({ ...ambient, audio: { path: 'a.wav', content_type: 'text/plain' } }), [
    'audio.content_type must be an audio media type such as audio/wav (got "text/plain")',
  ]);
  assert.deepEqual(reasons({ ...ambient, audio: { missing: true, path: 'a.wav' } }), [
    'audio has both missing and path',
  ]);
  assert.deepEqual(reasons({ ...ambient, audio: { missing: true } }), []);
  assert.deepEqual(reasons({ ...ambient, audio: null }), []);
});

test('ids must be non-empty strings without control characters', () => {
  assert.equal(reasons({ ...note, id: '' }).length, 1);
  assert.equal(reasons({ ...note, id: 'doc\u0000x' }).length, 1);
  assert.equal(reasons({ ...note, id: 7 }).length, 1);
  assert.deepEqual(reasons({ ...note, id: 'doc with spaces/and?odd#chars' }), []);
});

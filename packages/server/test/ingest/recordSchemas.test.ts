import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fieldOf } from '../../src/ingest/fieldChecks.js';
import { LINE_SCHEMAS } from '../../src/ingest/recordSchemas.js';
import { parseImportLine, RECORD_KINDS } from '../../src/ingest/records.js';
import { exampleLines } from './importFiles.js';

const { lines } = exampleLines('');
const example = Object.fromEntries(
  (lines as Record<string, unknown>[]).map((line) => [line.kind as string, line]),
) as Record<string, Record<string, unknown>>;
const reasons = (line: Record<string, unknown>) => {
  const parsed = parseImportLine(JSON.stringify(line));
  return parsed.ok ? [] : parsed.reasons;
};

test('each record kind accepts exactly the fields its schema names', () => {
  for (const kind of RECORD_KINDS) {
    const line = { ...example[kind], undeclared: 1 };
    assert.deepEqual(reasons(line), ['unknown field undeclared'], kind);
  }
});

test("a field's refusal words what its schema expects, with the value given", () => {
  for (const kind of RECORD_KINDS) {
    const schema = LINE_SCHEMAS[kind];
    for (const name of Object.keys(schema.properties)) {
      const property = fieldOf(schema, name);
      if (name === 'kind' || !property || property.byRule || property.expected === undefined) continue;
      // The first reason: a bad schema_type also makes the fields of its type out of place.
      assert.equal(
        reasons({ ...example[kind], [name]: { not: 'right' } })[0],
        `${name} must be ${property.expected} (got {"not":"right"})`,
        `${kind}.${name}`,
      );
    }
  }
});

test('a required field left out is named as missing; an optional one takes its default', () => {
  const { id: _id, ...withoutId } = example.patient as Record<string, unknown>;
  assert.deepEqual(reasons(withoutId), [
    `id must be ${fieldOf(LINE_SCHEMAS.patient, 'id')?.expected} (got missing)`,
  ]);
  const parsed = parseImportLine(JSON.stringify({ ...example.encounter, demo_training: undefined }));
  assert.ok(parsed.ok && parsed.record.kind === 'encounter' && parsed.record.demoTraining === false);
});

test('an id counts UTF-16 code units, as the store does', () => {
  assert.deepEqual(reasons({ ...example.patient, id: '\u{1F600}'.repeat(127) }), []);
  assert.equal(reasons({ ...example.patient, id: '\u{1F600}'.repeat(128) }).length, 1);
});

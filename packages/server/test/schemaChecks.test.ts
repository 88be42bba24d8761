/**
 * Every schema the service checks values against compiles, in strict mode: a keyword or format
 * Ajv does not know would otherwise surface only when that one setting is set or that one field is
 * first imported.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TObject, TSchema } from 'typebox';
import { useSettingFormats } from '../src/config/environment.js';
import { SETTINGS } from '../src/config/settings.js';
import { ListEncountersQuery } from '../src/contract/listQuery.js';
import { useContractFormats } from '../src/domain/schemaFormats.js';
import * as records from '../src/ingest/recordSchemas.js';
import { schemaCheck } from '../src/schemaChecks.js';

function propertiesOf(schema: TObject): [string, TSchema][] {
  return Object.entries(schema.properties as Record<string, TSchema>);
}

const recordSchemas = (Object.entries(records) as [string, unknown][]).filter(
  (entry): entry is [string, TObject] =>
    typeof entry[1] === 'object' && entry[1] !== null && 'properties' in entry[1],
);

test('happy: every setting, query parameter and import field compiles to a check', () => {
  useContractFormats();
  useSettingFormats();
  const compiled: string[] = [];
  const compile = (label: string, schema: TSchema) => {
    assert.doesNotThrow(() => schemaCheck(schema), label);
    compiled.push(label);
  };
  for (const [name, setting] of propertiesOf(SETTINGS)) compile(`setting ${name}`, setting);
  for (const [name, parameter] of propertiesOf(ListEncountersQuery)) compile(`query ${name}`, parameter);
  for (const [schemaName, schema] of recordSchemas) {
    for (const [name, field] of propertiesOf(schema)) compile(`${schemaName}.${name}`, field);
  }
  assert.ok(recordSchemas.length >= 8, `the record schemas were found (${recordSchemas.length})`);
  assert.ok(compiled.length > 100, `${compiled.length} schemas compiled`);
});

test('error: a keyword the service does not declare is refused when compiled', () => {
  assert.throws(() => schemaCheck({ type: 'string', maxLenght: 5 }), /unknown keyword: "maxLenght"/);
  assert.throws(() => schemaCheck({ type: 'string', format: 'no-such-format' }), /unknown format/);
});

test('happy: checks follow the schema: bounds, enums, patterns and the contract formats', () => {
  useContractFormats();
  const limit = schemaCheck({ type: 'integer', minimum: 1, maximum: 100 });
  assert.deepEqual([0, 1, 100, 101, 1.5, '5'].map(limit), [false, true, true, false, false, false]);
  const order = schemaCheck({ type: 'string', enum: ['asc', 'desc'] });
  assert.deepEqual(['asc', 'ASC', ''].map(order), [true, false, false]);
  const dateTime = schemaCheck({ type: 'string', format: 'date-time' });
  assert.deepEqual(['2026-05-01T00:00:00Z', '2026-02-30T00:00:00Z', '2026-05-01T00:00:00'].map(dateTime), [
    true,
    false,
    false,
  ]);
});

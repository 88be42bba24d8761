import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BASE62, newId } from '../src/ids.js';

test('an ID is its prefix, an underscore and 22 base62 characters', () => {
  for (const prefix of ['req', 'enc', 'evt'] as const) {
    assert.match(newId(prefix), new RegExp(`^${prefix}_[0-9A-Za-z]{22}$`));
  }
});

test('IDs do not repeat and draw on every base62 character', () => {
  const ids = Array.from({ length: 10_000 }, () => newId('req'));
  assert.equal(new Set(ids).size, ids.length);
  const seen = new Set(ids.join('').replaceAll('req_', ''));
  assert.deepEqual([...seen].sort().join(''), [...BASE62].sort().join(''));
});

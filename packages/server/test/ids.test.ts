import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BASE62, type IdPrefix, newId } from '../src/ids.js';

const PREFIXES: IdPrefix[] = ['req', 'enc', 'evt', 'doc'];

test('an ID is its prefix, an underscore and 22 base62 characters', () => {
  for (const prefix of PREFIXES) {
    assert.match(newId(prefix), new RegExp(`^${prefix}_[0-9A-Za-z]{22}$`));
  }
});

test('IDs do not repeat, and every base62 character is as likely as any other', () => {
  const ids = Array.from({ length: 10_000 }, (_, i) => newId(PREFIXES[i % PREFIXES.length]!));
  assert.equal(new Set(ids).size, ids.length);
  const counts = new Map<string, number>();
  for (const id of ids) for (const c of id.slice(4)) counts.set(c, (counts.get(c) ?? 0) + 1);
  assert.deepEqual([...counts.keys()].sort().join(''), [...BASE62].sort().join(''));
  // 220,000 characters: about 3,548 each, give or take 60. Taking bytes modulo 62 without
  // rejecting the top 8 values would make 0-7 about a fifth more likely than the rest.
  const expected = (ids.length * 22) / 62;
  for (const [c, n] of counts) {
    assert.ok(
      Math.abs(n / expected - 1) < 0.15,
      `${c} drawn ${n} times, expected about ${Math.round(expected)}`,
    );
  }
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { toIso } from '../../src/time.js';

// Every time in a response goes through toIso, which formats from a per-day cache rather than
// Date#toISOString; it must write exactly what toISOString writes (decisions.md, Responses).
test('happy: toIso writes what Date#toISOString writes, for any instant a Date can hold', () => {
  fc.assert(
    fc.property(fc.integer({ min: -8.64e15, max: 8.64e15 }), (ms) => {
      assert.equal(toIso(ms), new Date(ms).toISOString());
    }),
    { numRuns: 20_000 },
  );
  for (const ms of [0, 1, 999, 86_399_999, 86_400_000, 253_402_300_799_999, 253_402_300_800_000, -1]) {
    assert.equal(toIso(ms), new Date(ms).toISOString());
  }
});

test('happy: toIso agrees across many days in one run (the day cache is bounded)', () => {
  const day = 86_400_000;
  for (let i = 0; i < 10_000; i++) {
    const ms = 1_700_000_000_000 + i * day + ((i * 7919) % day);
    assert.equal(toIso(ms), new Date(ms).toISOString());
  }
});

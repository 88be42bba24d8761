import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidArgumentError } from 'commander';
import {
  parseInstant,
  parseList,
  parseOnOff,
  parseRouteGroups,
  parseTrueFalse,
  parseWholeNumber,
} from '../../src/cli/optionParsers.js';

const refused = (parse: () => unknown, message: RegExp) =>
  assert.throws(parse, (e: unknown) => e instanceof InvalidArgumentError && message.test(e.message));

test('true/false and on/off are exact', () => {
  assert.equal(parseTrueFalse('true'), true);
  assert.equal(parseTrueFalse('false'), false);
  refused(() => parseTrueFalse('yes'), /expected true or false/);
  assert.equal(parseOnOff('on'), true);
  assert.equal(parseOnOff('off'), false);
  refused(() => parseOnOff('maybe'), /expected on or off/);
});

test('route groups come back in the contract order, without duplicates; none and empty mean none', () => {
  assert.deepEqual(parseRouteGroups('documents, encounters,documents'), ['encounters', 'documents']);
  assert.deepEqual(parseRouteGroups('none'), []);
  assert.deepEqual(parseRouteGroups(''), []);
  refused(() => parseRouteGroups('encounters,billing'), /unknown route group billing/);
});

test('lists drop blanks; instants need an offset; whole numbers are bounded', () => {
  assert.deepEqual(parseList(' a, ,b,'), ['a', 'b']);
  assert.deepEqual(parseList(','), []);
  assert.equal(parseInstant('2026-05-01T02:00:00+02:00'), Date.parse('2026-05-01T00:00:00Z'));
  refused(() => parseInstant('2026-05-01'), /RFC 3339/);
  refused(() => parseInstant('2026-05-01T00:00:00'), /RFC 3339/);
  const count = parseWholeNumber(0, 10);
  assert.equal(count('10'), 10);
  for (const bad of ['11', '-1', '1.5', 'ten', '']) refused(() => count(bad), /whole number from 0 to 10/);
});

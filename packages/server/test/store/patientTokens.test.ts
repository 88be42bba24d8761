/**
 * Patient IDs as FTS5 tokens (migration 010): each ID is one token of the ascii tokenizer's
 * alphabet, and no two IDs share a token, whatever characters they hold.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { patientToken, patientTokenQuery } from '../../src/store/patientTokens.js';

const tricky = [
  'pat_01hx0000',
  'PAT_01HX0000',
  'pat-01hx0000',
  'pat 01hx0000',
  'patz5f01hx0000',
  'z',
  'Z',
  '',
  ' ',
  'Ωmega',
  'a😀b',
  'a\u{1F600}b\u{1F601}',
  '"quoted"',
  'AND',
  'tab\there',
  'café',
  'cafe\u0301',
];

test('happy: every ID is one token of lower-case letters and digits, as the ascii tokenizer reads it', () => {
  for (const id of tricky) assert.match(patientToken(id), /^[a-z0-9]+$/, JSON.stringify(id));
  assert.equal(patientToken('abc123'), 'abc123', 'a-y and digits stand for themselves');
  assert.equal(patientToken('pat_1'), 'patz5f1');
  assert.equal(patientToken('Ω'), 'zceza9', 'other characters are their UTF-8 bytes');
  assert.equal(patientToken('😀'), 'zf0z9fz98z80', 'a character outside the BMP is one code point');
});

test('security: no two IDs share a token (the mapping is one-to-one)', () => {
  const tokens = new Map<string, string>();
  for (const id of tricky) {
    const token = patientToken(id);
    assert.equal(
      tokens.get(token),
      undefined,
      `${JSON.stringify(id)} and ${JSON.stringify(tokens.get(token))}`,
    );
    tokens.set(token, id);
  }
  // Decoding proves it for every ID: z and two hex digits is a byte, anything else itself.
  const decode = (token: string) => {
    if (token === 'z') return '';
    const bytes: number[] = [];
    for (let i = 0; i < token.length; i++) {
      if (token[i] === 'z') {
        bytes.push(Number.parseInt(token.slice(i + 1, i + 3), 16));
        i += 2;
      } else bytes.push(token.charCodeAt(i));
    }
    return Buffer.from(bytes).toString('utf8');
  };
  for (const id of tricky) assert.equal(decode(patientToken(id)), id);
});

test('security: the query for a patient is that one token, quoted, never an FTS5 operator', () => {
  assert.equal(patientTokenQuery('AND'), '"z41z4ez44"');
  assert.equal(patientTokenQuery('pat_1'), '"patz5f1"');
});

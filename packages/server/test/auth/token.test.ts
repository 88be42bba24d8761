import assert from 'node:assert/strict';
import { test } from 'node:test';
import { crc32 } from 'node:zlib';
import { checksumOf, generateToken, isWellFormedToken, tokenEnvironment } from '../../src/auth/token.js';

test('happy: generated tokens have the documented shape and a valid checksum', () => {
  for (const env of ['live', 'test'] as const) {
    const token = generateToken(env);
    assert.match(token, new RegExp(`^eds_${env}_[0-9A-Za-z]{32}[0-9A-Za-z]{6}$`));
    assert.equal(isWellFormedToken(token), true);
    assert.equal(tokenEnvironment(token), env);
  }
});

test('happy: the checksum is CRC-32 of the ASCII prefix in base62, most significant first, padded to 6', () => {
  // Independent computation: the base62 digits of zlib's CRC-32.
  const head = 'eds_live_' + 'a'.repeat(32);
  let n = crc32(head);
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  const digits: string[] = [];
  while (n > 0) {
    digits.unshift(alphabet[n % 62]!);
    n = Math.floor(n / 62);
  }
  assert.equal(checksumOf(head), digits.join('').padStart(6, '0'));
  assert.equal(isWellFormedToken(head + checksumOf(head)), true);
});

test('error: any single-character change, truncation or wrong prefix fails the offline check', () => {
  const token = generateToken('live');
  for (let i = 9; i < token.length; i++) {
    const c = token[i] === 'a' ? 'b' : 'a';
    assert.equal(isWellFormedToken(token.slice(0, i) + c + token.slice(i + 1)), false, `position ${i}`);
  }
  assert.equal(isWellFormedToken(token.slice(0, -1)), false);
  assert.equal(isWellFormedToken(token.replace('eds_live_', 'eds_prod_')), false);
  assert.equal(isWellFormedToken(`${token} `), false);
});

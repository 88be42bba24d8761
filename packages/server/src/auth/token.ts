/**
 * API token format (decisions.md, API keys): `eds_live_` or `eds_test_`, 32 random base62
 * characters, then a 6-character checksum: CRC-32 (IEEE) of the ASCII bytes before it, in base62,
 * most significant digit first, left-padded with `0`. Checked offline, before any lookup, so junk
 * costs no store read and secret scanners can recognise real tokens.
 */
import { crc32 } from 'node:zlib';
import { BASE62, randomBase62 } from '../ids.js';

export type TokenEnvironment = 'live' | 'test';

const PREFIX = { live: 'eds_live_', test: 'eds_test_' } as const;
const BODY_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
export const TOKEN_LENGTH = PREFIX.live.length + BODY_LENGTH + CHECKSUM_LENGTH;
const TOKEN_SHAPE = /^eds_(live|test)_[0-9A-Za-z]{38}$/;

export function checksumOf(text: string): string {
  let value = crc32(Buffer.from(text, 'ascii'));
  let out = '';
  while (value > 0) {
    out = BASE62[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out.padStart(CHECKSUM_LENGTH, '0');
}

export function generateToken(environment: TokenEnvironment): string {
  const head = PREFIX[environment] + randomBase62(BODY_LENGTH);
  return head + checksumOf(head);
}

/** The environment a token claims by its prefix, or undefined when it has neither prefix. */
export function tokenEnvironment(token: string): TokenEnvironment | undefined {
  if (token.startsWith(PREFIX.test)) return 'test';
  if (token.startsWith(PREFIX.live)) return 'live';
  return undefined;
}

/** Well-formed: right prefix, length, alphabet and checksum. */
export function isWellFormedToken(token: string): boolean {
  if (token.length !== TOKEN_LENGTH || !TOKEN_SHAPE.test(token)) return false;
  // Digit by digit against the token's own, least significant first: every request with a key
  // is checked, and building the checksum's text cost more than the CRC.
  // Six base62 digits hold any CRC-32 (62^6 > 2^32): the leading ones compare against '0'.
  let value = crc32(token.slice(0, -CHECKSUM_LENGTH));
  for (let i = TOKEN_LENGTH - 1; i >= TOKEN_LENGTH - CHECKSUM_LENGTH; i--) {
    if (token.charCodeAt(i) !== BASE62.charCodeAt(value % 62)) return false;
    value = Math.floor(value / 62);
  }
  return true;
}

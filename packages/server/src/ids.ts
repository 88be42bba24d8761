/**
 * Opaque identifiers: a short type prefix and 22 base62 characters from the CSPRNG (131 bits).
 * No timestamp, sequence or anything derived from the data (decisions.md, Identifiers).
 */
import { randomBytes, randomFillSync } from 'node:crypto';

export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// For IDs (not secrets): CSPRNG bytes drawn 4 KiB at a time, as crypto.randomUUID does; a call per
// ID costs more than the ID, and every request gets one. Each byte is handed out once.
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function randomByte(): number {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  return pool[poolOffset++]!;
}

/**
 * Uniform base62 characters by rejection sampling (248 = 4 × 62, so no modulo bias). Secrets
 * (tokens, signing secrets) use fresh bytes that are never kept in a pool.
 */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

const BASE62_CODES = Buffer.from(BASE62, 'latin1');
const UNDERSCORE = 0x5f;
const ID_LENGTH = 22;
const idCharacters = Buffer.alloc(64);

export type IdPrefix = 'org' | 'pat' | 'enc' | 'doc' | 'key' | 'evt' | 'dlv' | 'whe' | 'req' | 'att';

/**
 * The ID is written into one buffer and read back as one flat string: built a character at a
 * time it would be 24 concatenations, which V8 flattens again wherever the ID is written out.
 */
export function newId(prefix: IdPrefix): string {
  // Three characters: copied here rather than by Buffer#write, a call into C++ for each ID.
  for (let i = 0; i < prefix.length; i++) idCharacters[i] = prefix.charCodeAt(i);
  let filled = prefix.length;
  idCharacters[filled++] = UNDERSCORE;
  const end = filled + ID_LENGTH;
  while (filled < end) {
    const byte = randomByte();
    if (byte < 248) idCharacters[filled++] = BASE62_CODES[byte % 62]!;
  }
  return idCharacters.toString('latin1', 0, end);
}

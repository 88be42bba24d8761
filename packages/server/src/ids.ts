/**
 * Opaque identifiers: a short type prefix and 22 base62 characters from the CSPRNG (131 bits).
 * No timestamp, sequence or anything derived from the data (decisions.md, Identifiers).
 */
import { randomBytes } from 'node:crypto';

export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniform base62 characters by rejection sampling (248 = 4 × 62, so no modulo bias). */
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

export type IdPrefix = 'org' | 'pat' | 'enc' | 'doc' | 'key' | 'evt' | 'dlv' | 'whe' | 'req' | 'att';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(22)}`;
}

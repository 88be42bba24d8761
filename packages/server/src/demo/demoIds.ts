/**
 * Demo ids: derived from the seed and the record's place in the data set, so re-running the demo
 * replaces rows instead of adding them. They still look like any other id (prefix + 22 base62
 * characters) and carry nothing readable; only demo rows are made this way.
 */
import { BASE62, type IdPrefix } from '../ids.js';
import type { Random } from './random.js';

export function idFromDigest(prefix: IdPrefix, digest: Uint8Array): string {
  let out = `${prefix}_`;
  for (let i = 0; i < 22; i++) out += BASE62[digest[i]! % 62];
  return out;
}

/** An id drawn from the demo PRNG, for records whose parent's digest already seeds it. */
export function idFromRandom(prefix: IdPrefix, random: Random): string {
  let out = `${prefix}_`;
  for (let i = 0; i < 22; i++) out += BASE62[Math.floor(random.next() * 62)];
  return out;
}

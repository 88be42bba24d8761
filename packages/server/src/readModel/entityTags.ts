/**
 * Strong entity tags (RFC 9110 §8.8.3) for the stored answers, and If-None-Match matching.
 * A stored answer's tag is a digest of its bytes, computed once when the answer is written; a
 * list page's tag is derived from its items' tags and the numbers the page adds around them, so
 * no request hashes a whole body.
 */
import { createHash } from 'node:crypto';

/** 160 bits of SHA-256, base64url, quoted. */
function tagOf(text: string): string {
  return `"${createHash('sha256').update(text, 'utf8').digest('base64url').slice(0, 27)}"`;
}

/** The tag of stored bytes; the detail envelopes around them are fixed, so it is theirs too. */
export function entityTagOfBytes(bytes: string): string {
  return tagOf(bytes);
}

/**
 * A list page's tag: its bytes are `{"items":[…],"limit":L,"offset":O,"total":T}`, so the items'
 * tags (each standing for its exact bytes, in order) and L, O and T determine them.
 */
export function listEntityTag(
  itemTags: readonly string[],
  limit: number,
  offset: number,
  total: number,
): string {
  return tagOf(`list:${limit}:${offset}:${total}:${itemTags.join(',')}`);
}

/**
 * Whether an If-None-Match field value names `current` (weak comparison, as RFC 9110 §13.1.2
 * requires for If-None-Match; `*` matches any current representation).
 */
export function ifNoneMatchHits(field: string | undefined, current: string): boolean {
  if (field === undefined) return false;
  const value = field.trim();
  if (value === '*') return true;
  for (const raw of value.split(',')) {
    let tag = raw.trim();
    if (tag.startsWith('W/')) tag = tag.slice(2);
    if (tag === current) return true;
  }
  return false;
}

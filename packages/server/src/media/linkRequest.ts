/**
 * Reads a media-host request target (`/media/{key}?expires=&type=&sig=`) into the claims the
 * signature is checked against. Works on the raw target: nothing here normalizes `..` or `//`,
 * so a key that is not a safe object key is refused, never resolved.
 */
import type { LinkClaims } from './linkSigner.js';
import { MEDIA_PATH_PREFIX } from './linkSigner.js';
import { isSafeObjectKey } from './storage.js';

export type LinkRequest =
  /** Not under /media/: an unknown path. */
  | { readonly kind: 'other_path' }
  /** Under /media/ but not something this service can have issued. */
  | { readonly kind: 'malformed' }
  | { readonly kind: 'link'; readonly claims: LinkClaims };

const SIGNED_PARAMS = ['expires', 'type', 'sig'] as const;

export function readLinkRequest(target: string): LinkRequest {
  const q = target.indexOf('?');
  const path = q === -1 ? target : target.slice(0, q);
  if (!path.startsWith(MEDIA_PATH_PREFIX)) return { kind: 'other_path' };

  let key: string;
  try {
    key = path.slice(MEDIA_PATH_PREFIX.length).split('/').map(decodeURIComponent).join('/');
  } catch {
    return { kind: 'malformed' };
  }
  if (!isSafeObjectKey(key)) return { kind: 'malformed' };

  const query = new URLSearchParams(q === -1 ? '' : target.slice(q + 1));
  const values: Partial<Record<(typeof SIGNED_PARAMS)[number], string>> = {};
  for (const name of SIGNED_PARAMS) {
    const all = query.getAll(name);
    // Exactly once: a repeated parameter could be read differently by a proxy in front.
    if (all.length !== 1) return { kind: 'malformed' };
    values[name] = all[0];
  }
  const { expires = '', type = '', sig = '' } = values;
  return { kind: 'link', claims: { key, expires, type, sig } };
}

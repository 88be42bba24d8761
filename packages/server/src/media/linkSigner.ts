/**
 * Links on the embedded media host:
 *
 *   {base}/media/{key}?expires={unix seconds}&type={content type}&sig={hex}
 *   sig = HMAC-SHA256(media signing secret, "eds-media-link-v1\n{key}\n{expires}\n{type}")
 *
 * The content type travels in the link (as S3's presigned `response-content-type` does) so the
 * folder needs no side files and the served type is the one recorded with the recording. The
 * signature covers all three, so changing any of them, or the path, invalidates the link.
 * Checked in constant time. Key and expiry cannot contain a newline, so the payload is
 * unambiguous.
 */
import { timingSafeEqual } from 'node:crypto';
import { hmacSha256 } from '../hmacSha256.js';

const PAYLOAD_VERSION = 'eds-media-link-v1';

export const MEDIA_PATH_PREFIX = '/media/';

function signature(key: string, expiresSeconds: string, contentType: string, secret: string): Buffer {
  return hmacSha256(secret).update(`${PAYLOAD_VERSION}\n${key}\n${expiresSeconds}\n${contentType}`).digest();
}

/** `expiresAtMs` must be a whole second: the link's expiry is exactly that instant. */
export function signMediaLink(
  baseUrl: string,
  key: string,
  contentType: string,
  expiresAtMs: number,
  secret: string,
): string {
  if (!Number.isSafeInteger(expiresAtMs) || expiresAtMs % 1000 !== 0) {
    throw new RangeError('a media link expires on a whole second');
  }
  const expires = String(expiresAtMs / 1000);
  const sig = signature(key, expires, contentType, secret).toString('hex');
  const path = key.split('/').map(encodeURIComponent).join('/');
  const query = new URLSearchParams({ expires, type: contentType, sig });
  return `${baseUrl}${MEDIA_PATH_PREFIX}${path}?${query.toString()}`;
}

export type LinkCheck = 'valid' | 'expired' | 'bad_signature';

export interface LinkClaims {
  readonly key: string;
  readonly expires: string;
  readonly type: string;
  readonly sig: string;
}

/**
 * The signature is checked before the expiry, so "expired" is only ever said about a link this
 * service really issued; anything altered is "bad_signature".
 */
export function checkMediaLink(claims: LinkClaims, secret: string, nowMs: number): LinkCheck {
  if (!/^\d{1,12}$/.test(claims.expires) || !/^[0-9a-f]{64}$/.test(claims.sig)) return 'bad_signature';
  const expected = signature(claims.key, claims.expires, claims.type, secret);
  if (!timingSafeEqual(expected, Buffer.from(claims.sig, 'hex'))) return 'bad_signature';
  return Number(claims.expires) * 1000 <= nowMs ? 'expired' : 'valid';
}

/**
 * Tokens are stored only as HMAC-SHA256(digest secret, token). The secret comes from the
 * configuration through a provider, so a KMS-backed provider can fail (→ 503
 * digest_key_unavailable) without the rest of the code knowing where the key lives.
 */
import { createHmac } from 'node:crypto';

export interface DigestKeyProvider {
  /** The current digest secret; throws DigestKeyUnavailableError when it cannot be had. */
  current(): string;
}

export class DigestKeyUnavailableError extends Error {
  override name = 'DigestKeyUnavailableError';
}

export function staticDigestKey(secret: string): DigestKeyProvider {
  return {
    current() {
      if (!secret) throw new DigestKeyUnavailableError('no digest secret configured');
      return secret;
    },
  };
}

export function digestToken(token: string, secret: string): string {
  return createHmac('sha256', secret).update(token, 'utf8').digest('hex');
}

/**
 * Tokens are stored only as HMAC-SHA256(digest secret, token). The secret comes from the
 * configuration through a provider, so a KMS-backed provider can fail (→ 503
 * digest_key_unavailable) without the rest of the code knowing where the key lives.
 *
 * Rotation (decisions.md, Rotation): the provider may also hold the previous secret, so keys
 * digested with it still verify and are re-digested with the current one on their next use.
 * Each secret has a fingerprint stored beside every digest it made, so the store can count the
 * keys that still depend on the previous secret.
 */
import { hmacSha256 } from '../hmacSha256.js';

export interface DigestKeyProvider {
  /** The current digest secret; throws DigestKeyUnavailableError when it cannot be had. */
  current(): string;
  /** The former digest secret during a rotation; absent or undefined when there is none. */
  previous?(): string | undefined;
}

export class DigestKeyUnavailableError extends Error {
  override name = 'DigestKeyUnavailableError';
}

export function staticDigestKey(secret: string, previousSecret?: string): DigestKeyProvider {
  return {
    current() {
      if (!secret) throw new DigestKeyUnavailableError('no digest secret configured');
      return secret;
    },
    previous() {
      return previousSecret || undefined;
    },
  };
}

export function digestToken(token: string, secret: string): string {
  return hmacSha256(secret).update(token, 'utf8').digest('hex');
}

const fingerprints = new Map<string, string>();

/**
 * A short public name for a digest secret: an HMAC of a fixed label, so it identifies the secret
 * without revealing anything usable about it. Computed once per process and secret.
 */
export function digestSecretId(secret: string): string {
  let id = fingerprints.get(secret);
  if (id === undefined) {
    id = hmacSha256(secret).update('eds key digest secret id', 'utf8').digest('hex').slice(0, 16);
    fingerprints.set(secret, id);
  }
  return id;
}

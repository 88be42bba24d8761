/**
 * Endpoint signing secrets. The secret must be usable for signing on every attempt, so it is
 * stored encrypted (AES-256-GCM), not as a digest. The encryption key is derived with HKDF from
 * the deployment's digest secret, so no new secret has to be configured; the subscription id is
 * the additional authenticated data, so a ciphertext copied onto another row does not decrypt.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { randomBase62 } from '../ids.js';

export const SIGNING_SECRET_PREFIX = 'whsec_';
/** 43 base62 characters carry just over 256 bits. */
const SECRET_LENGTH = 43;
const FORMAT = 'v1';
const HKDF_INFO = 'eds webhook signing secret encryption v1';

export function generateSigningSecret(): string {
  return `${SIGNING_SECRET_PREFIX}${randomBase62(SECRET_LENGTH)}`;
}

const derived = new Map<string, Buffer>();

/** The AES key for a digest secret; derived once per process and secret. */
function encryptionKey(rootSecret: string): Buffer {
  let key = derived.get(rootSecret);
  if (!key) {
    if (!rootSecret) throw new Error('no secret configured to encrypt webhook signing secrets');
    key = Buffer.from(hkdfSync('sha256', rootSecret, Buffer.alloc(0), HKDF_INFO, 32));
    derived.set(rootSecret, key);
  }
  return key;
}

export function encryptSigningSecret(secret: string, subscriptionId: string, rootSecret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', encryptionKey(rootSecret), iv);
  cipher.setAAD(Buffer.from(subscriptionId, 'utf8'));
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [FORMAT, iv.toString('base64url'), tag.toString('base64url'), body.toString('base64url')].join('.');
}

export class SecretDecryptionError extends Error {
  override name = 'SecretDecryptionError';
}

export function decryptSigningSecret(stored: string, subscriptionId: string, rootSecret: string): string {
  const [format, iv, tag, body] = stored.split('.');
  if (format !== FORMAT || iv === undefined || tag === undefined || body === undefined) {
    throw new SecretDecryptionError('unknown signing secret format');
  }
  try {
    const decipher = createDecipheriv('aes-256-gcm', encryptionKey(rootSecret), Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(subscriptionId, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString(
      'utf8',
    );
  } catch {
    // Usually the digest secret changed since the subscription was created.
    throw new SecretDecryptionError('signing secret cannot be decrypted with the configured secret');
  }
}

/**
 * Which signing secret signs an attempt, and opening it. During a rotation's grace the former
 * secret keeps signing until `secret_switch_at`; from then on the new one does (decisions.md,
 * Rotation). Exactly one secret signs any attempt: one `v1=` signature per header.
 *
 * Secrets are encrypted with a key derived from the key digest secret (secrets.ts); while that
 * secret is itself being rotated, a ciphertext made under the previous one still opens.
 */
import type { Config } from '../config.js';
import type { WebhookSubscriptionRow } from '../store/schema.js';
import { decryptSigningSecret, SecretDecryptionError } from './secrets.js';

type SigningRow = Pick<
  WebhookSubscriptionRow,
  'secret_ciphertext' | 'previous_secret_ciphertext' | 'secret_switch_at'
>;

/** Whether the former secret still signs at `now`. */
export function previousSecretSigns(row: SigningRow, now: number): boolean {
  return row.previous_secret_ciphertext !== null && row.secret_switch_at !== null && now < row.secret_switch_at;
}

/** The ciphertext of the secret that signs at `now`. */
export function signingCiphertextAt(row: SigningRow, now: number): string {
  return previousSecretSigns(row, now) ? (row.previous_secret_ciphertext as string) : row.secret_ciphertext;
}

/** Opens a stored secret with the current digest secret, or the previous one during its rotation. */
export function openSigningSecret(
  stored: string,
  subscriptionId: string,
  secrets: Pick<Config['secrets'], 'keyDigest' | 'keyDigestPrevious'>,
): string {
  try {
    return decryptSigningSecret(stored, subscriptionId, secrets.keyDigest);
  } catch (error) {
    if (secrets.keyDigestPrevious === undefined || !(error instanceof SecretDecryptionError)) throw error;
    return decryptSigningSecret(stored, subscriptionId, secrets.keyDigestPrevious);
  }
}

/**
 * Which signing secret signs an attempt, and opening it. During a rotation's grace the former
 * secret keeps signing until `secret_switch_at`; from then on the new one does (decisions.md,
 * Rotation). Exactly one secret signs any attempt: one `v1=` signature per header.
 *
 * Secrets are encrypted with a key derived from the key digest secret (secrets.ts); while that
 * secret is itself being rotated, a ciphertext made under the previous one still opens.
 */
import type { Config } from '../config.js';
import type { Db } from '../database/connection.js';
import type { WebhookSubscriptionRow } from '../database/schema.js';
import { replaceSigningSecret } from '../store/webhookSubscriptions.js';
import { decryptSigningSecret, encryptSigningSecret, SecretDecryptionError } from './secrets.js';

type SigningRow = Pick<
  WebhookSubscriptionRow,
  'secret_ciphertext' | 'previous_secret_ciphertext' | 'secret_switch_at'
>;

/** Whether the former secret still signs at `now`. */
export function previousSecretSigns(row: SigningRow, now: number): boolean {
  return (
    row.previous_secret_ciphertext !== null && row.secret_switch_at !== null && now < row.secret_switch_at
  );
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

type RootSecrets = Pick<Config['secrets'], 'keyDigest' | 'keyDigestPrevious'>;

/** Whether a stored secret opens only with the previous digest secret. */
function onPreviousRoot(stored: string, subscriptionId: string, secrets: RootSecrets): boolean {
  if (secrets.keyDigestPrevious === undefined) return false;
  try {
    decryptSigningSecret(stored, subscriptionId, secrets.keyDigest);
    return false;
  } catch {
    decryptSigningSecret(stored, subscriptionId, secrets.keyDigestPrevious);
    return true;
  }
}

/**
 * During a digest-secret rotation, moves a subscription's stored secrets to encryption under the
 * current digest secret, so the previous one can be dropped without losing them. Written only if
 * the row still holds what was read (a concurrent rotation or re-encryption wins); false when
 * there was nothing to move.
 */
export async function reencryptUnderCurrentRoot(
  db: Db,
  row: WebhookSubscriptionRow,
  secrets: RootSecrets,
): Promise<boolean> {
  const move = (stored: string | null): string | null => {
    if (stored === null || !onPreviousRoot(stored, row.id, secrets)) return stored;
    const plain = decryptSigningSecret(stored, row.id, secrets.keyDigestPrevious as string);
    return encryptSigningSecret(plain, row.id, secrets.keyDigest);
  };
  const current = move(row.secret_ciphertext) as string;
  const previous = move(row.previous_secret_ciphertext);
  if (current === row.secret_ciphertext && previous === row.previous_secret_ciphertext) return false;
  return replaceSigningSecret(db, row, {
    secret_ciphertext: current,
    previous_secret_ciphertext: previous,
    secret_switch_at: row.secret_switch_at,
    updated_at: row.updated_at,
  });
}

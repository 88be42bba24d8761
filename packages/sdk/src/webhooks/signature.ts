/**
 * The signing algorithm shared by the verifier and the test signer: HMAC-SHA256 keyed with the
 * secret's UTF-8 bytes exactly as printed (prefix included, no base64 or hex decoding), over the
 * timestamp, a period, and the raw body bytes.
 */
import { createHmac } from 'node:crypto';

export type RawBody = string | Uint8Array;

export const SIGNATURE_VERSION = 'v1';

export function computeSignature(secret: string, timestamp: string, rawBody: RawBody): Uint8Array {
  if (typeof secret !== 'string' || secret === '')
    throw new TypeError('The webhook signing secret is required.');
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  return createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(`${timestamp}.`, 'utf8')
    .update(body)
    .digest();
}

/** Full header names for a prefix, e.g. `Eds-` → `Eds-Signature`. */
export function headerNames(prefix: string) {
  return {
    eventId: `${prefix}Event-Id`,
    deliveryId: `${prefix}Delivery-Id`,
    timestamp: `${prefix}Timestamp`,
    signature: `${prefix}Signature`,
    version: `${prefix}Webhook-Version`,
  } as const;
}

export const DEFAULT_HEADER_PREFIX = 'Eds-';
export const DEFAULT_TOLERANCE_SECONDS = 300;

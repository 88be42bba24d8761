/**
 * Signing one attempt: `v1=<hex HMAC-SHA256(secret, "<timestamp>.<raw body>")>`, with the secret
 * used as the UTF-8 bytes of the string printed at creation (decisions.md). A fresh timestamp and
 * signature per attempt; the body bytes are the stored ones, never re-serialized.
 */
import { WEBHOOK_HEADERS } from '../contract/webhook.js';
import { hmacSha256 } from '../hmacSha256.js';

export function signatureFor(secret: string, timestamp: number, body: string | Buffer): string {
  const mac = hmacSha256(secret);
  mac.update(`${timestamp}.`, 'utf8');
  mac.update(body);
  return `v1=${mac.digest('hex')}`;
}

export interface SignedHeadersInput {
  prefix: string;
  secret: string;
  eventId: string;
  deliveryId: string;
  apiVersion: string;
  body: string;
  /** Epoch milliseconds of signing; sent as whole seconds. */
  now: number;
}

/** The five contract headers (with the deployment's prefix) and the content type. */
export function signedHeaders(input: SignedHeadersInput): Record<string, string> {
  const timestamp = Math.floor(input.now / 1000);
  const p = input.prefix;
  return {
    'content-type': 'application/json',
    [`${p}${WEBHOOK_HEADERS.eventId}`]: input.eventId,
    [`${p}${WEBHOOK_HEADERS.deliveryId}`]: input.deliveryId,
    [`${p}${WEBHOOK_HEADERS.timestamp}`]: String(timestamp),
    [`${p}${WEBHOOK_HEADERS.signature}`]: signatureFor(input.secret, timestamp, input.body),
    [`${p}${WEBHOOK_HEADERS.version}`]: input.apiVersion,
  };
}

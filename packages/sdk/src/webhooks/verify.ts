/**
 * Verifies one webhook delivery with the contract's receiver steps, in the contract's order:
 *  1. read the raw body bytes before any JSON parsing;
 *  2. reject a missing or non-decimal timestamp;
 *  3. reject a timestamp more than the tolerance (300 s) from our clock, past or future;
 *  4. signed input = timestamp + "." + raw body bytes, exactly as received;
 *  5. HMAC-SHA256 over it with the signing secret (each secret, during a rotation);
 *  6. parse the signature header, where only `v1=` is supported;
 *  7. compare in constant time (every secret against every v1 signature, no early exit);
 *  8. only then parse JSON;
 *  9. require Event-Id == body.id;
 * 10. require Webhook-Version == body.api_version.
 * Missing headers are rejected before step 2, so nothing is computed for an incomplete delivery.
 */
import { timingSafeEqual } from 'node:crypto';
import type { WebhookEvent } from '../types.js';
import { WebhookVerificationError } from './errors.js';
import { type HeadersLike, headerReader } from './headers.js';
import {
  computeSignature,
  DEFAULT_HEADER_PREFIX,
  DEFAULT_TOLERANCE_SECONDS,
  headerNames,
  type RawBody,
  SIGNATURE_VERSION,
} from './signature.js';

export interface VerifyWebhookOptions {
  /** The body exactly as received: a Buffer/Uint8Array, or a string decoded from it losslessly. */
  rawBody: RawBody;
  headers: HeadersLike;
  /**
   * The endpoint's signing secret, exactly as printed. During a rotation, a list: the new secret
   * and the old one; the delivery is accepted when any of them signed it.
   */
  secret: string | readonly string[];
  /** Largest distance between the timestamp and our clock, either way. Default 300. */
  toleranceSeconds?: number;
  /** Our clock: a Date or epoch milliseconds (as Date.now()). Default: now. */
  now?: Date | number;
  /** The deployment's header prefix. Default `Eds-`. */
  headerPrefix?: string;
}

export interface VerifiedWebhook {
  event: WebhookEvent;
  /** The business idempotency key: dedupe on this (equals event.id). */
  eventId: string;
  /** Same across retries of one delivery; for support and debugging only, never for dedupe. */
  deliveryId: string;
  /** The signing time, epoch seconds. */
  timestamp: number;
}

const DECIMAL = /^[0-9]{1,15}$/;
const HEX_DIGEST = /^[0-9a-fA-F]{64}$/;

export function verifyWebhook(options: VerifyWebhookOptions): VerifiedWebhook {
  const prefix = options.headerPrefix ?? DEFAULT_HEADER_PREFIX;
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const names = headerNames(prefix);

  // Step 1: raw bytes only. An object here means a JSON parser already ran: the bytes are lost.
  const rawBody = options.rawBody;
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) {
    throw new WebhookVerificationError(
      'raw_body_required',
      'The webhook body must be the raw bytes (Buffer or string), read before any JSON parsing.',
    );
  }

  const read = headerReader(options.headers);
  const header = (name: string): string => {
    const value = read(name)?.trim();
    if (!value) throw new WebhookVerificationError('missing_header', `Missing header ${name}.`, name);
    return value;
  };
  const timestamp = header(names.timestamp);
  const signatureHeader = header(names.signature);
  const eventId = header(names.eventId);
  const deliveryId = header(names.deliveryId);
  const version = header(names.version);

  // Step 2: decimal Unix epoch seconds, nothing else (no sign, fraction, exponent or spaces).
  if (!DECIMAL.test(timestamp)) {
    throw new WebhookVerificationError(
      'timestamp_invalid',
      `${names.timestamp} is not decimal epoch seconds.`,
    );
  }
  const signedAt = Number(timestamp);

  // Step 3: within tolerance of our clock, in the past or the future.
  const nowMs = options.now === undefined ? Date.now() : Number(options.now);
  const skew = Math.abs(nowMs / 1000 - signedAt);
  if (!(skew <= tolerance)) {
    throw new WebhookVerificationError(
      'timestamp_out_of_tolerance',
      `${names.timestamp} is ${Math.round(skew)} s from this receiver's clock (tolerance ${tolerance} s).`,
    );
  }

  // Steps 4 and 5: HMAC over `${timestamp}.` + the raw body bytes, with each secret.
  const secrets = typeof options.secret === 'string' ? [options.secret] : [...options.secret];
  if (secrets.length === 0 || secrets.some((s) => typeof s !== 'string' || s === '')) {
    throw new TypeError('verifyWebhook: secret must be a non-empty string or a list of them');
  }
  const expected = secrets.map((secret) => computeSignature(secret, timestamp, rawBody));

  // Step 6: only v1 signatures count; several may be present (space or comma separated).
  const candidates = signatureHeader
    .split(/[\s,]+/)
    .filter((part) => part.startsWith(`${SIGNATURE_VERSION}=`))
    .map((part) => part.slice(SIGNATURE_VERSION.length + 1));
  if (candidates.length === 0) {
    throw new WebhookVerificationError(
      'signature_version_unsupported',
      `${names.signature} carries no ${SIGNATURE_VERSION}= signature; other versions are not supported.`,
    );
  }

  // Step 7: constant-time comparison of equal-length digests; every pair is compared, so the
  // time taken does not tell which secret (if any) matched.
  let matched = false;
  for (const hex of candidates) {
    if (!HEX_DIGEST.test(hex)) continue;
    const given = Buffer.from(hex, 'hex');
    for (const digest of expected) {
      if (timingSafeEqual(given, digest)) matched = true;
    }
  }
  if (!matched) {
    throw new WebhookVerificationError(
      'signature_mismatch',
      `No ${SIGNATURE_VERSION} signature matches the body.`,
    );
  }

  // Step 8: parse only now that the bytes are authentic.
  const event = parseEvent(rawBody);

  // Steps 9 and 10: the headers must agree with the signed body.
  if (event.id !== eventId) {
    throw new WebhookVerificationError('event_id_mismatch', `${names.eventId} does not equal the body's id.`);
  }
  if (event.api_version !== version) {
    throw new WebhookVerificationError(
      'version_mismatch',
      `${names.version} does not equal the body's api_version.`,
    );
  }
  return { event, eventId, deliveryId, timestamp: signedAt };
}

function parseEvent(rawBody: RawBody): WebhookEvent {
  let parsed: unknown;
  try {
    const text =
      typeof rawBody === 'string' ? rawBody : new TextDecoder('utf-8', { fatal: true }).decode(rawBody);
    parsed = JSON.parse(text);
  } catch {
    throw new WebhookVerificationError('body_invalid_json', 'The signed body is not valid UTF-8 JSON.');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new WebhookVerificationError('body_invalid_json', 'The signed body is not a JSON object.');
  }
  return parsed as WebhookEvent;
}

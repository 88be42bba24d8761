/**
 * An independent receiver-side verifier, written from the contract's ten receiver steps (not
 * from the service's signer), so a test receiver accepts exactly what a partner's would.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const CONTRACT_BODY_KEYS = [
  'id',
  'type',
  'api_version',
  'occurred_at',
  'organization_id',
  'resources',
];

export type Verification =
  | { ok: true; body: Record<string, unknown>; eventId: string; deliveryId: string; timestamp: number }
  | { ok: false; reason: string };

export function verifyDelivery(
  rawBody: Buffer,
  headers: Record<string, string | string[] | undefined>,
  secret: string,
  options: { prefix?: string; nowMs?: number; toleranceSeconds?: number } = {},
): Verification {
  const prefix = (options.prefix ?? 'Eds-').toLowerCase();
  const get = (name: string) => {
    const v = headers[`${prefix}${name}`.toLowerCase()];
    return Array.isArray(v) ? undefined : v;
  };
  const timestamp = get('timestamp');
  const signature = get('signature');
  const eventId = get('event-id');
  const deliveryId = get('delivery-id');
  const version = get('webhook-version');
  // Missing headers are rejected.
  if (!timestamp || !signature || !eventId || !deliveryId || !version)
    return { ok: false, reason: 'missing_header' };
  // 1. rawBody is the bytes as received (the caller read them before any parsing).
  // 2. decimal epoch seconds.
  if (!/^\d+$/.test(timestamp)) return { ok: false, reason: 'timestamp_not_decimal' };
  // 3. within 300 s of our clock.
  const now = (options.nowMs ?? Date.now()) / 1000;
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? 300)) {
    return { ok: false, reason: 'timestamp_out_of_tolerance' };
  }
  // 4 and 5. HMAC-SHA256 over "<timestamp>.<raw body>" with the secret's UTF-8 bytes.
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(Buffer.concat([Buffer.from(`${timestamp}.`, 'utf8'), rawBody]))
    .digest();
  // 6. only v1.
  if (!signature.startsWith('v1=')) return { ok: false, reason: 'signature_version' };
  const received = Buffer.from(signature.slice(3), 'hex');
  // 7. constant-time comparison.
  if (received.length !== mac.length || !timingSafeEqual(received, mac)) {
    return { ok: false, reason: 'signature_mismatch' };
  }
  // 8. parse JSON only now.
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return { ok: false, reason: 'invalid_json' };
  }
  // 9 and 10. headers agree with the body.
  if (body.id !== eventId) return { ok: false, reason: 'event_id_mismatch' };
  if (body.api_version !== version) return { ok: false, reason: 'version_mismatch' };
  return { ok: true, body, eventId, deliveryId, timestamp: Number(timestamp) };
}

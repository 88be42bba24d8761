/**
 * The verifier against hand-made vectors: one known-good delivery whose digest was computed
 * outside the SDK (openssl), and one mutation per failure the contract names.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  signWebhook,
  type VerifyWebhookOptions,
  verifyWebhook,
  WebhookVerificationError,
  type WebhookVerificationStep,
} from '../src/webhooks/index.js';

// Contains characters that base64/hex decoding would choke on or change: used as UTF-8 as printed.
const SECRET = 'whsec_Example-Secret/+=';
const TIMESTAMP = '1777647600'; // 2026-05-01T15:00:00Z
const NOW = 1777647600 * 1000;
const BODY =
  '{"id":"evt_test","type":"recording.transcript_ready","api_version":"2026-05-01",' +
  '"occurred_at":"2026-05-01T15:00:00.000Z","organization_id":"org_test",' +
  '"resources":{"encounter_id":"enc_test","document_id":"doc_test"}}';
// printf '%s' "$TIMESTAMP.$BODY" | openssl dgst -sha256 -hmac "$SECRET"
const DIGEST = '435aa02ef53363ea76526ba9d5c7adca104e7127ff4584bcb39fbe243008958d';

function headers(overrides: Record<string, string | undefined> = {}): Record<string, string> {
  const base: Record<string, string | undefined> = {
    'eds-event-id': 'evt_test',
    'eds-delivery-id': 'dlv_test',
    'eds-timestamp': TIMESTAMP,
    'eds-signature': `v1=${DIGEST}`,
    'eds-webhook-version': '2026-05-01',
    ...overrides,
  };
  return Object.fromEntries(Object.entries(base).filter(([, v]) => v !== undefined)) as Record<
    string,
    string
  >;
}

function hmac(secret: string, timestamp: string, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

function verify(overrides: Partial<VerifyWebhookOptions> = {}) {
  return verifyWebhook({ rawBody: BODY, headers: headers(), secret: SECRET, now: NOW, ...overrides });
}

function rejects(step: WebhookVerificationStep, overrides: Partial<VerifyWebhookOptions>) {
  assert.throws(
    () => verify(overrides),
    (error: unknown) => {
      assert.ok(error instanceof WebhookVerificationError, `expected WebhookVerificationError, got ${error}`);
      assert.equal(error.step, step, error.message);
      return true;
    },
  );
}

describe('verifyWebhook: accepted deliveries', () => {
  it('accepts the known-good vector as a string body and returns the typed event', () => {
    const verified = verify();
    assert.equal(verified.eventId, 'evt_test');
    assert.equal(verified.deliveryId, 'dlv_test');
    assert.equal(verified.timestamp, 1777647600);
    assert.equal(verified.event.type, 'recording.transcript_ready');
    assert.deepEqual(verified.event.resources, { encounter_id: 'enc_test', document_id: 'doc_test' });
  });

  it('accepts the same bytes as a Buffer and as a Uint8Array', () => {
    assert.equal(verify({ rawBody: Buffer.from(BODY, 'utf8') }).eventId, 'evt_test');
    assert.equal(verify({ rawBody: new Uint8Array(Buffer.from(BODY, 'utf8')) }).eventId, 'evt_test');
  });

  it('accepts a body with non-ASCII bytes, signed over its UTF-8 bytes', () => {
    const body = BODY.replace('org_test', 'org_tést—☃');
    const signature = `v1=${hmac(SECRET, TIMESTAMP, body)}`;
    const raw = Buffer.from(body, 'utf8');
    assert.equal(
      verify({ rawBody: raw, headers: headers({ 'eds-signature': signature }) }).event.organization_id,
      'org_tést—☃',
    );
  });

  it('matches header names case-insensitively, from a record, a fetch Headers, pairs and rawHeaders', () => {
    const mixed = Object.fromEntries(Object.entries(headers()).map(([k, v]) => [k.toUpperCase(), v]));
    assert.equal(verify({ headers: mixed }).eventId, 'evt_test');
    assert.equal(verify({ headers: new Headers(headers()) }).eventId, 'evt_test');
    const pairs = Object.entries(headers()) as [string, string][];
    assert.equal(verify({ headers: pairs }).eventId, 'evt_test');
    assert.equal(verify({ headers: pairs.flat() }).eventId, 'evt_test');
  });

  it('accepts when any of several v1 signatures matches (space or comma separated), others ignored', () => {
    const other = 'ab'.repeat(32);
    for (const value of [
      `v1=${other} v1=${DIGEST}`,
      `v1=${other},v1=${DIGEST}`,
      `v0=${other}, v1=${DIGEST}`,
    ]) {
      assert.equal(verify({ headers: headers({ 'eds-signature': value }) }).eventId, 'evt_test', value);
    }
  });

  it('accepts timestamps exactly at the tolerance, past and future', () => {
    assert.ok(verify({ now: NOW + 300_000 }));
    assert.ok(verify({ now: NOW - 300_000 }));
    assert.ok(verify({ now: new Date(NOW + 299_000) }));
  });

  it('honors a custom header prefix', () => {
    const prefixed = Object.fromEntries(
      Object.entries(headers()).map(([k, v]) => [k.replace('eds-', 'acme-'), v]),
    );
    assert.equal(verify({ headers: prefixed, headerPrefix: 'Acme-' }).eventId, 'evt_test');
    rejects('missing_header', { headers: prefixed });
  });

  it('agrees with signWebhook (the test signer uses the same algorithm)', () => {
    const signed = signWebhook({
      event: { id: 'evt_test', api_version: '2026-05-01' },
      rawBody: BODY,
      secret: SECRET,
      timestamp: Number(TIMESTAMP),
      deliveryId: 'dlv_test',
    });
    assert.equal(signed.headers['Eds-Signature'], `v1=${DIGEST}`);
    assert.equal(verify({ headers: signed.headers }).deliveryId, 'dlv_test');
  });
});

describe('verifyWebhook: rejected deliveries name the failed step', () => {
  for (const name of [
    'eds-event-id',
    'eds-delivery-id',
    'eds-timestamp',
    'eds-signature',
    'eds-webhook-version',
  ]) {
    it(`missing ${name}`, () => {
      rejects('missing_header', { headers: headers({ [name]: undefined }) });
      rejects('missing_header', { headers: headers({ [name]: '  ' }) });
    });
  }

  it('names the missing header', () => {
    const error = (() => {
      try {
        verify({ headers: headers({ 'eds-signature': undefined }) });
      } catch (e) {
        return e as WebhookVerificationError;
      }
    })();
    assert.equal(error?.header, 'Eds-Signature');
  });

  for (const value of [
    '1777647600.5',
    '-1777647600',
    '+1777647600',
    '1.7e9',
    '0x69F4C0F0',
    'abc',
    '1777647600, 1777647600',
  ]) {
    it(`non-decimal timestamp ${JSON.stringify(value)}`, () => {
      // Re-sign so only the timestamp's form can be at fault.
      const signature = `v1=${hmac(SECRET, value, BODY)}`;
      rejects('timestamp_invalid', {
        headers: headers({ 'eds-timestamp': value, 'eds-signature': signature }),
      });
    });
  }

  it('a stale timestamp (301 s old), even with a valid signature for it', () => {
    rejects('timestamp_out_of_tolerance', { now: NOW + 301_000 });
  });

  it('a future timestamp (301 s ahead)', () => {
    rejects('timestamp_out_of_tolerance', { now: NOW - 301_000 });
  });

  it('a custom tolerance', () => {
    rejects('timestamp_out_of_tolerance', { now: NOW + 61_000, toleranceSeconds: 60 });
  });

  for (const value of [`v0=${DIGEST}`, `v2=${DIGEST}`, DIGEST, `V1=${DIGEST}`, `sha256=${DIGEST}`]) {
    it(`a signature of another version than v1: ${value.slice(0, 8)}…`, () => {
      rejects('signature_version_unsupported', { headers: headers({ 'eds-signature': value }) });
    });
  }

  it('one altered body byte', () => {
    const altered = Buffer.from(BODY, 'utf8');
    altered[altered.indexOf('enc_test') + 4] = 'X'.charCodeAt(0);
    rejects('signature_mismatch', { rawBody: altered });
  });

  it('reserialized JSON (same data, different whitespace)', () => {
    const reserialized = JSON.stringify(JSON.parse(BODY), null, 2);
    rejects('signature_mismatch', { rawBody: reserialized });
    rejects('signature_mismatch', { rawBody: `${BODY}\n` });
  });

  it('a wrong secret, and a secret given decoded instead of as printed', () => {
    rejects('signature_mismatch', { secret: 'whsec_other' });
    rejects('signature_mismatch', { secret: Buffer.from(SECRET.slice(6), 'base64').toString('latin1') });
  });

  it('a signature for another timestamp (replayed signature with a fresh timestamp)', () => {
    rejects('signature_mismatch', { headers: headers({ 'eds-timestamp': '1777647601' }), now: NOW });
  });

  it('a truncated digest, a non-hex digest, a digest with one wrong digit', () => {
    rejects('signature_mismatch', { headers: headers({ 'eds-signature': `v1=${DIGEST.slice(0, 62)}` }) });
    rejects('signature_mismatch', { headers: headers({ 'eds-signature': `v1=${'zz'.repeat(32)}` }) });
    rejects('signature_mismatch', { headers: headers({ 'eds-signature': `v1=${DIGEST.slice(0, 63)}0` }) });
  });

  it('a signed body that is not a JSON object', () => {
    for (const body of ['not json', '[1,2]', 'null', '"evt_test"']) {
      const signature = `v1=${hmac(SECRET, TIMESTAMP, body)}`;
      rejects('body_invalid_json', { rawBody: body, headers: headers({ 'eds-signature': signature }) });
    }
    const invalidUtf8 = Buffer.from([0x7b, 0xff, 0x7d]);
    const signature = `v1=${createHmac('sha256', SECRET).update(`${TIMESTAMP}.`).update(invalidUtf8).digest('hex')}`;
    rejects('body_invalid_json', { rawBody: invalidUtf8, headers: headers({ 'eds-signature': signature }) });
  });

  it('Event-Id header differing from body id', () => {
    rejects('event_id_mismatch', { headers: headers({ 'eds-event-id': 'evt_other' }) });
  });

  it('Webhook-Version header differing from body api_version', () => {
    rejects('version_mismatch', { headers: headers({ 'eds-webhook-version': '2026-06-01' }) });
  });

  it('a body already parsed into an object (raw bytes lost)', () => {
    rejects('raw_body_required', { rawBody: JSON.parse(BODY) });
  });

  it('checks in the contract order: a stale delivery with a bad signature fails on the timestamp', () => {
    rejects('timestamp_out_of_tolerance', {
      now: NOW + 3_600_000,
      headers: headers({ 'eds-signature': `v1=${'00'.repeat(32)}` }),
    });
    // And an id mismatch with a bad signature fails on the signature: the body is not trusted yet.
    rejects('signature_mismatch', {
      headers: headers({ 'eds-event-id': 'evt_other', 'eds-signature': `v1=${'00'.repeat(32)}` }),
    });
  });

  it('refuses to run without a secret', () => {
    assert.throws(() => verify({ secret: '' }), TypeError);
  });
});

describe('verifyWebhook during a secret rotation (a list of secrets)', () => {
  const NEW_SECRET = 'whsec_NewSecretAfterRotation0123456789abcdefgh';

  it('accepts a delivery signed with the old secret when given [new, old]', () => {
    const verified = verify({ secret: [NEW_SECRET, SECRET] });
    assert.equal(verified.eventId, 'evt_test');
  });

  it('accepts a delivery signed with the new secret when given [new, old]', () => {
    const signature = `v1=${hmac(NEW_SECRET, TIMESTAMP, BODY)}`;
    const verified = verify({
      secret: [NEW_SECRET, SECRET],
      headers: headers({ 'eds-signature': signature }),
    });
    assert.equal(verified.deliveryId, 'dlv_test');
  });

  it('rejects a delivery that none of the listed secrets signed', () => {
    rejects('signature_mismatch', { secret: [NEW_SECRET, 'whsec_someOtherSecret'] });
  });

  it('accepts a one-element list like the plain string', () => {
    assert.equal(verify({ secret: [SECRET] }).eventId, 'evt_test');
  });

  it('refuses an empty list or an empty secret in the list', () => {
    assert.throws(() => verify({ secret: [] }), TypeError);
    assert.throws(() => verify({ secret: [NEW_SECRET, ''] }), TypeError);
  });
});

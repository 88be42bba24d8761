/**
 * The SDK's copies of contract facts against the server's tables (dev-only imports): reason
 * codes, webhook version, event type, header names and tolerance, and the signing algorithm
 * (the server's signer's headers verify with the SDK).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  buildEventBody,
  REASON_CODES as SERVER_CODES,
  WEBHOOK_EVENT_TYPE as SERVER_TYPE,
  WEBHOOK_API_VERSION as SERVER_VERSION,
  signedHeaders,
  WEBHOOK_TIMESTAMP_TOLERANCE_SECONDS,
} from '@eds/server/test-kit';
import { REASON_CODES } from '../src/index.js';
import {
  DEFAULT_TOLERANCE_SECONDS,
  signWebhook,
  verifyWebhook,
  WEBHOOK_API_VERSION,
  WEBHOOK_EVENT_TYPE,
} from '../src/webhooks/index.js';

describe('contract facts copied into the SDK', () => {
  it('the reason codes equal the server table', () => {
    assert.deepEqual([...REASON_CODES].sort(), [...SERVER_CODES].sort());
  });

  it('webhook version, event type and tolerance equal the server constants', () => {
    assert.equal(WEBHOOK_API_VERSION, SERVER_VERSION);
    assert.equal(WEBHOOK_EVENT_TYPE, SERVER_TYPE);
    assert.equal(DEFAULT_TOLERANCE_SECONDS, WEBHOOK_TIMESTAMP_TOLERANCE_SECONDS);
  });

  it("the server signer's headers and body verify with the SDK, and the SDK signer matches them", () => {
    const now = Date.parse('2026-05-01T15:00:00.000Z');
    const secret = 'whsec_0aB9zZ';
    const event = buildEventBody(
      'evt_x',
      { organizationId: 'org_x', encounterId: 'enc_x', documentId: 'doc_x' },
      now,
    );
    const body = JSON.stringify(event);
    for (const prefix of ['Eds-', 'Acme-']) {
      const headers = signedHeaders({
        prefix,
        secret,
        eventId: event.id,
        deliveryId: 'dlv_x',
        apiVersion: event.api_version,
        body,
        now,
      });
      const verified = verifyWebhook({
        rawBody: Buffer.from(body),
        headers,
        secret,
        now,
        headerPrefix: prefix,
      });
      assert.deepEqual(verified.event, event);
      assert.equal(verified.deliveryId, 'dlv_x');
      const ours = signWebhook({
        event,
        rawBody: body,
        secret,
        timestamp: now / 1000,
        deliveryId: 'dlv_x',
        headerPrefix: prefix,
      });
      assert.equal(ours.headers[`${prefix}Signature`], headers[`${prefix}Signature`]);
    }
  });
});

/**
 * Signs a delivery the way the service does, for tests and local development of receivers:
 * returns the body and its headers (the five delivery headers and Content-Type). Never needed in
 * production receivers.
 */
import type { WebhookEvent } from '../types.js';
import { computeSignature, DEFAULT_HEADER_PREFIX, headerNames, type RawBody } from './signature.js';

export interface SignWebhookOptions {
  /** The exact bytes to send; defaults to JSON.stringify(event). */
  rawBody?: RawBody;
  event: Pick<WebhookEvent, 'id' | 'api_version'> & Partial<WebhookEvent>;
  secret: string;
  /** Epoch seconds of signing. Default: now. */
  timestamp?: number;
  deliveryId?: string;
  headerPrefix?: string;
}

export interface SignedWebhook {
  rawBody: RawBody;
  headers: Record<string, string>;
}

export function signWebhook(options: SignWebhookOptions): SignedWebhook {
  const rawBody = options.rawBody ?? JSON.stringify(options.event);
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  const names = headerNames(options.headerPrefix ?? DEFAULT_HEADER_PREFIX);
  const digest = Buffer.from(computeSignature(options.secret, timestamp, rawBody)).toString('hex');
  return {
    rawBody,
    headers: {
      [names.eventId]: options.event.id,
      [names.deliveryId]: options.deliveryId ?? `dlv_test_${options.event.id}`,
      [names.timestamp]: timestamp,
      [names.signature]: `v1=${digest}`,
      [names.version]: options.event.api_version,
      'Content-Type': 'application/json',
    },
  };
}

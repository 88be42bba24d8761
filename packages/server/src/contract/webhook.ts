/** Webhook facts of the contract and decisions.md. */
export const WEBHOOK_EVENT_TYPE = 'recording.transcript_ready' as const;
export const WEBHOOK_API_VERSION = '2026-05-01' as const;
export const WEBHOOK_TIMESTAMP_TOLERANCE_SECONDS = 300;
/** Header names without the configurable product prefix (default `Eds-`). */
export const WEBHOOK_HEADERS = {
  eventId: 'Event-Id',
  deliveryId: 'Delivery-Id',
  timestamp: 'Timestamp',
  signature: 'Signature',
  version: 'Webhook-Version',
} as const;

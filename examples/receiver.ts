/**
 * A webhook receiver: verifies each delivery, answers 204 at once, skips events already
 * handled (by event id, never by delivery id), then fetches the follow-up routes.
 *
 *   EDS_BASE_URL=... EDS_API_KEY=... EDS_WEBHOOK_SECRET=... [EDS_WEBHOOK_SECRET_PREVIOUS=...] \
 *     node --import tsx examples/receiver.ts [--port 3000] [--path /webhooks/eds] [--header-prefix Eds-]
 *
 * Rotating the signing secret (docs/webhooks.md): after `eds webhook rotate-secret`, restart this
 * receiver with EDS_WEBHOOK_SECRET = the new secret and EDS_WEBHOOK_SECRET_PREVIOUS = the old one;
 * it accepts deliveries signed with either. Once `eds webhook show` says the current secret
 * signs, unset EDS_WEBHOOK_SECRET_PREVIOUS and restart again.
 *
 * The deduplication store here is in memory: it forgets on restart and is not shared between
 * processes. Production receivers use a shared store (see DedupeStore) and, because work after
 * the 204 is not redelivered, hand the event to a durable queue before doing slow work.
 * Logs carry ids and counts only: no patient data, no transcript text, no signed audio link.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EdsApiError, EncounterDataClient } from '@eds/sdk';
import { createNodeWebhookHandler, type VerifiedWebhook, WebhookDeduplicator } from '@eds/sdk/webhooks';
import { option, required } from './args.js';

const client = new EncounterDataClient({
  baseUrl: required('base-url', 'EDS_BASE_URL'),
  apiKey: required('api-key', 'EDS_API_KEY'),
});
const path = option('path', undefined, '/webhooks/eds')!;
const port = Number(option('port', 'PORT', '3000'));
const host = option('host', undefined, '127.0.0.1')!;

function log(message: string, fields: Record<string, unknown> = {}): void {
  console.error(JSON.stringify({ at: new Date().toISOString(), message, ...fields }));
}

/** The follow-up fetch: only the routes approved for this receiver will succeed. */
async function followUp({ event, eventId }: VerifiedWebhook): Promise<void> {
  if (event.type !== 'recording.transcript_ready') {
    log('ignored event type', { eventId, type: event.type });
    return;
  }
  const { encounter_id: encounterId, document_id: documentId } = event.resources;
  const encounter = await client.getEncounter(encounterId);
  const document = await client.getDocument(encounterId, documentId);
  const transcript = await client.getTranscript(encounterId, documentId);
  let audio = 'not requested';
  try {
    const link = await client.getAudioLink(encounterId, documentId);
    // Use link.url right away (download or hand to a player); never log or store it.
    audio = `link valid until ${link.expiresAt.toISOString()}`;
  } catch (error) {
    // The audio route is approved separately (recordings:read); its absence is not a failure.
    if (!(error instanceof EdsApiError) || error.retryable) throw error;
    audio = `unavailable (${error.reasonCode})`;
  }
  log('processed', {
    eventId,
    encounterId: encounter.encounter_id,
    documentId: document.document_id,
    turns: transcript.transcript.turns.length,
    audio,
  });
}

/** The current secret first; during a rotation's grace also the previous one. */
function signingSecrets(): string[] {
  const current = required('secret', 'EDS_WEBHOOK_SECRET');
  const previous = option('previous-secret', 'EDS_WEBHOOK_SECRET_PREVIOUS');
  return previous ? [current, previous] : [current];
}

const handler = createNodeWebhookHandler({
  secret: signingSecrets(),
  headerPrefix: option('header-prefix', 'EDS_WEBHOOK_HEADER_PREFIX', 'Eds-'),
  dedupe: new WebhookDeduplicator(),
  onEvent: followUp,
  onError: (error, webhook) => {
    const reason =
      error instanceof EdsApiError
        ? `${error.status} ${error.reasonCode} (request ${error.requestId})`
        : String(error);
    log(webhook ? 'follow-up failed' : 'delivery rejected', { eventId: webhook?.eventId, reason });
  },
});

const server = createServer((req, res) => {
  if (new URL(req.url ?? '/', 'http://receiver').pathname !== path) {
    res.statusCode = 404;
    res.end();
    return;
  }
  handler(req, res);
});

server.listen(port, host, () => {
  const address = server.address() as AddressInfo;
  log('listening', { url: `http://${host}:${address.port}${path}` });
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => server.close(() => process.exit(0)));
}

/**
 * The OpenAPI 3.1 `webhooks` entry for `recording.transcript_ready`: what a receiver gets (body,
 * the five signed headers), how to verify it and how retries behave, so the API reference shows
 * the event beside the routes. Facts come from contract/webhook.ts and the worker's settings.
 */
import { WEBHOOK_EVENT_EXAMPLE } from '../contract/examples.js';
import {
  WEBHOOK_API_VERSION,
  WEBHOOK_EVENT_TYPE,
  WEBHOOK_HEADERS,
  WEBHOOK_TIMESTAMP_TOLERANCE_SECONDS,
} from '../contract/webhook.js';

export interface WebhookDocSettings {
  headerPrefix: string;
  retryScheduleSeconds: readonly number[];
  jitterRatio: number;
}

function duration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  return `${Math.round((seconds / 3600) * 10) / 10} h`;
}

export function webhooksSection(settings: WebhookDocSettings) {
  const h = (name: string) => `${settings.headerPrefix}${name}`;
  const schedule = settings.retryScheduleSeconds.map(duration).join(', ');
  const attempts = settings.retryScheduleSeconds.length + 1;
  const header = (name: string, description: string, example: string) => ({
    name: h(name),
    in: 'header',
    required: true,
    description,
    schema: { type: 'string' },
    example,
  });
  const description = `Sent once an ambient transcript is finalized, to each receiver whose subscription is
activated and confirmed (off unless the deployment enables webhooks). The body is thin: IDs only,
never transcript text or patient data. Fetch what you need with the follow-up routes
(\`getEncounter\`, \`getDocument\`, \`getTranscript\`, \`getAudio\`) and your own API key.

**Verify before anything else**, on the raw body bytes exactly as received:

1. Read \`${h(WEBHOOK_HEADERS.timestamp)}\` (Unix seconds) and refuse it if it is more than
   ${WEBHOOK_TIMESTAMP_TOLERANCE_SECONDS} s from your clock, either way.
2. Compute \`HMAC-SHA256(secret, "<timestamp>.<raw body>")\` in hex, with the endpoint's secret
   (\`whsec_…\`, its UTF-8 bytes), and compare it in constant time with the value after \`v1=\` in
   \`${h(WEBHOOK_HEADERS.signature)}\`.
3. Parse the body; check that \`id\` equals \`${h(WEBHOOK_HEADERS.eventId)}\` and \`api_version\` equals
   \`${h(WEBHOOK_HEADERS.version)}\`.

The SDK does all of this: \`verifyWebhook\` from \`@eds/sdk/webhooks\`, or its Node, Express and
Fastify adapters. Answer 2xx quickly (before slow work), then dedupe on the event id: the same
event can arrive more than once.

**Retries.** Any 2xx ends the delivery. A timeout, a connection error, 408, 409, 425, 429 or 5xx is
retried after ${schedule} (${attempts} attempts in a round, each delay ±${Math.round(settings.jitterRatio * 100)} % jitter);
\`Retry-After\` on 429 or 503 is honoured up to the next step. Redirects, other 4xx and 1xx end it
as failed. Every attempt carries the same body bytes, event id and delivery id, and a fresh
timestamp and signature.`;

  return {
    [WEBHOOK_EVENT_TYPE]: {
      post: {
        operationId: 'recordingTranscriptReady',
        summary: 'recording.transcript_ready',
        description,
        tags: ['webhooks'],
        security: [],
        parameters: [
          header(WEBHOOK_HEADERS.eventId, 'The body’s `id`. Dedupe on this.', WEBHOOK_EVENT_EXAMPLE.id),
          header(
            WEBHOOK_HEADERS.deliveryId,
            'The same for every attempt of this event to this endpoint; for support, never for dedupe.',
            'dlv_6Ls2XwP9rQ4mKt7ZbN3vHc',
          ),
          header(
            WEBHOOK_HEADERS.timestamp,
            'Unix seconds of signing, fresh for every attempt.',
            '1777649508',
          ),
          header(
            WEBHOOK_HEADERS.signature,
            '`v1=` and the hex HMAC-SHA256 of `<timestamp>.<raw body>` under the endpoint’s secret.',
            'v1=3f9a1c7e5b2d8f4a6c0e9b1d7f3a5c8e2b4d6f8a0c1e3b5d7f9a2c4e6b8d0f1a',
          ),
          header(WEBHOOK_HEADERS.version, 'The body’s `api_version`.', WEBHOOK_API_VERSION),
        ],
        requestBody: {
          required: true,
          description: 'Exactly these keys; serialized once and sent as the same bytes on every attempt.',
          content: {
            'application/json': {
              schema: { $ref: '#/components/schemas/WebhookEvent' },
              example: WEBHOOK_EVENT_EXAMPLE,
            },
          },
        },
        responses: {
          '2XX': { description: 'Received. Answer before doing slow work.' },
          '4XX': {
            description: 'Verification failed or refused: not retried (408, 409, 425 and 429 are retried).',
          },
          '5XX': { description: 'Retried per the schedule above.' },
        },
      },
    },
  };
}

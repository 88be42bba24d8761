/**
 * What every adapter does once it has the raw body: verify, answer at once, then do the work
 * in the background (deduplicated by event id). Answering before the work keeps the service's
 * 15-second attempt timeout out of the picture; the price is that work failing after the 204 is
 * not redelivered, so `onEvent` should hand off to durable storage when losing work matters.
 */
import type { WebhookDeduplicator } from '../dedupe.js';
import { WebhookVerificationError } from '../errors.js';
import { type VerifiedWebhook, type VerifyWebhookOptions, verifyWebhook } from '../verify.js';

export type VerifierSettings = Omit<VerifyWebhookOptions, 'rawBody' | 'headers'>;

export interface WebhookHandlerOptions extends VerifierSettings {
  /** The work for a verified, first-seen event; runs after the 204 went out. */
  onEvent: (webhook: VerifiedWebhook) => Promise<void> | void;
  /** Skips events already processed. Recommended: delivery is at least once. */
  dedupe?: WebhookDeduplicator;
  /** Rejected deliveries and failed work end here (default: ignored). Never log the body. */
  onError?: (error: unknown, webhook?: VerifiedWebhook) => void;
}

export interface Answer {
  status: number;
  /** JSON body for rejections; none for success. */
  body?: { error: 'webhook_verification_failed'; step: string };
}

/** Verifies and decides the answer; returns the follow-up work to start once it is sent. */
export function decide(
  rawBody: unknown,
  headers: VerifyWebhookOptions['headers'],
  options: WebhookHandlerOptions,
): { answer: Answer; afterAnswer?: () => void } {
  let webhook: VerifiedWebhook;
  try {
    webhook = verifyWebhook({
      ...settingsOf(options),
      rawBody: rawBody as VerifyWebhookOptions['rawBody'],
      headers,
    });
  } catch (error) {
    options.onError?.(error);
    if (error instanceof WebhookVerificationError) {
      return {
        answer: {
          status: error.httpStatus,
          body: { error: 'webhook_verification_failed', step: error.step },
        },
      };
    }
    return { answer: { status: 500 } };
  }
  return { answer: { status: 204 }, afterAnswer: () => void runWork(webhook, options) };
}

async function runWork(webhook: VerifiedWebhook, options: WebhookHandlerOptions): Promise<void> {
  try {
    if (options.dedupe) await options.dedupe.once(webhook.eventId, () => options.onEvent(webhook));
    else await options.onEvent(webhook);
  } catch (error) {
    options.onError?.(error, webhook);
  }
}

function settingsOf(options: WebhookHandlerOptions): VerifierSettings {
  const { secret, toleranceSeconds, now, headerPrefix } = options;
  // Only the options given: with exactOptionalPropertyTypes an absent option is not `undefined`.
  const settings: VerifierSettings = { secret };
  if (toleranceSeconds !== undefined) settings.toleranceSeconds = toleranceSeconds;
  if (now !== undefined) settings.now = now;
  if (headerPrefix !== undefined) settings.headerPrefix = headerPrefix;
  return settings;
}

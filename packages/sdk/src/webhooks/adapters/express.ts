/**
 * Express adapter, without an express dependency. Mount it with the raw body parser so the
 * bytes survive:
 *   app.post('/webhooks/eds', express.raw({ type: 'application/json' }), expressWebhookHandler({...}))
 * If no body parser ran, the adapter reads the stream itself. If a JSON parser ran first, the
 * bytes are gone: the delivery is answered 500 (`raw_body_required`) so the service retries
 * once the route is fixed.
 */
import type { WebhookHandlerOptions } from './handler.js';
import { answerDelivery, readBodyOrRefuse } from './node.js';
import type { IncomingMessageLike, ServerResponseLike } from './nodeLike.js';

/** The part of Express's request the adapter reads (an IncomingMessage with `body`). */
export type ExpressRequestLike = IncomingMessageLike & { body?: unknown; readonly readableEnded?: boolean };
/** Express's response is a ServerResponse; that is all the adapter uses. */
export type ExpressResponseLike = ServerResponseLike;

export interface ExpressWebhookHandlerOptions extends WebhookHandlerOptions {
  maxBodyBytes?: number;
}

export function expressWebhookHandler(
  options: ExpressWebhookHandlerOptions,
): (req: ExpressRequestLike, res: ExpressResponseLike, next?: (error?: unknown) => void) => void {
  return (req, res) => {
    void (async () => {
      let rawBody = req.body;
      // express.raw leaves `{}` when the content type did not match; an unparsed stream is still readable.
      const untouched = rawBody === undefined || (isEmptyObject(rawBody) && !req.readableEnded);
      if (untouched) {
        rawBody = await readBodyOrRefuse(req, res, options);
        if (rawBody === undefined) return;
      }
      answerDelivery(rawBody, req, res, options);
    })();
  };
}

function isEmptyObject(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    !(value instanceof Uint8Array) &&
    Object.keys(value as object).length === 0
  );
}

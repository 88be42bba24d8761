/** node:http adapter: reads the raw body as a Buffer, verifies, answers 204, then works. */
import type { VerifiedWebhook } from '../verify.js';
import { verifyWebhook } from '../verify.js';
import { type Answer, decide, type VerifierSettings, type WebhookHandlerOptions } from './handler.js';
import type { IncomingMessageLike, RawBytes, ServerResponseLike } from './nodeLike.js';

/** Deliveries are small pointers; anything near this is not one of ours. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

export class BodyTooLargeError extends Error {
  override name = 'BodyTooLargeError';
}

/** Collects the request body as received, without decoding or parsing (a Buffer on Node). */
export async function readRawBody(
  req: AsyncIterable<unknown>,
  maxBytes: number = DEFAULT_MAX_BODY_BYTES,
): Promise<RawBytes> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk as Uint8Array);
    size += buffer.length;
    if (size > maxBytes) throw new BodyTooLargeError(`Webhook body exceeds ${maxBytes} bytes.`);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

/** Reads and verifies one request; throws WebhookVerificationError when it fails. */
export async function verifyNodeRequest(
  req: IncomingMessageLike,
  options: VerifierSettings & { maxBodyBytes?: number },
): Promise<VerifiedWebhook> {
  const rawBody = await readRawBody(req, options.maxBodyBytes);
  return verifyWebhook({ ...options, rawBody, headers: req.headers });
}

export interface NodeWebhookHandlerOptions extends WebhookHandlerOptions {
  maxBodyBytes?: number;
}

/** A `(req, res)` listener for `http.createServer` or a route of your own router. */
export function createNodeWebhookHandler(
  options: NodeWebhookHandlerOptions,
): (req: IncomingMessageLike, res: ServerResponseLike) => void {
  return (req, res) => {
    void handleNode(req, res, options);
  };
}

async function handleNode(
  req: IncomingMessageLike,
  res: ServerResponseLike,
  options: NodeWebhookHandlerOptions,
) {
  if (req.method !== 'POST') {
    res.setHeader('Allow', 'POST');
    return send(res, { status: 405 });
  }
  const rawBody = await readBodyOrRefuse(req, res, options);
  if (rawBody !== undefined) answerDelivery(rawBody, req, res, options);
}

/** Reads the body; one that cannot be read (too large, broken stream) is answered 413/400 here. */
export async function readBodyOrRefuse(
  req: IncomingMessageLike,
  res: ServerResponseLike,
  options: Pick<NodeWebhookHandlerOptions, 'maxBodyBytes' | 'onError'>,
): Promise<RawBytes | undefined> {
  try {
    return await readRawBody(req, options.maxBodyBytes);
  } catch (error) {
    options.onError?.(error);
    send(res, { status: error instanceof BodyTooLargeError ? 413 : 400 });
    return undefined;
  }
}

/** Verifies the body, sends the answer, then starts the work (after the answer is out). */
export function answerDelivery(
  rawBody: unknown,
  req: IncomingMessageLike,
  res: ServerResponseLike,
  options: WebhookHandlerOptions,
): void {
  const { answer, afterAnswer } = decide(rawBody, req.headers, options);
  send(res, answer);
  afterAnswer?.();
}

export function send(res: ServerResponseLike, answer: Answer): void {
  res.statusCode = answer.status;
  if (answer.body) {
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(answer.body));
  } else {
    res.end();
  }
}

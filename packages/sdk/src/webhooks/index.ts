/** @eds/sdk/webhooks: verify signed deliveries, adapters for node:http, Express and Fastify, dedupe. */

export { WEBHOOK_API_VERSION, WEBHOOK_EVENT_TYPE, type WebhookEvent } from '../types.js';
export { type ExpressWebhookHandlerOptions, expressWebhookHandler } from './adapters/express.js';
export { type FastifyLike, type FastifyWebhookOptions, registerFastifyWebhook } from './adapters/fastify.js';
export type { WebhookHandlerOptions } from './adapters/handler.js';
export {
  BodyTooLargeError,
  createNodeWebhookHandler,
  type NodeWebhookHandlerOptions,
  readRawBody,
  verifyNodeRequest,
} from './adapters/node.js';
export type { IncomingMessageLike, RawBytes, ServerResponseLike } from './adapters/nodeLike.js';
export {
  type DedupeOutcome,
  type DedupeStore,
  MemoryDedupeStore,
  WebhookDeduplicator,
} from './dedupe.js';
export { WebhookVerificationError, type WebhookVerificationStep } from './errors.js';
export type { HeadersLike } from './headers.js';
export { type SignedWebhook, type SignWebhookOptions, signWebhook } from './sign.js';
export { DEFAULT_HEADER_PREFIX, DEFAULT_TOLERANCE_SECONDS } from './signature.js';
export { type VerifiedWebhook, type VerifyWebhookOptions, verifyWebhook } from './verify.js';

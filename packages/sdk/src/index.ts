/** @eds/sdk: the typed REST client. Webhook verification lives in `@eds/sdk/webhooks`. */
export { AudioLink } from './audioLink.js';
export { EncounterDataClient, type EncounterDataClientOptions } from './client.js';
export { AudioLinkExpiredError, EdsApiError, EdsNetworkError } from './errors.js';
export { type EncounterWindow, MAX_OFFSET } from './paginate.js';
export type { RateLimitStatus } from './rateLimit.js';
export {
  type ClientErrorCode,
  type ErrorCode,
  isReasonCode,
  REASON_CODES,
  type ReasonCode,
} from './reasonCodes.js';
export type { Fetched as ConditionalResult, RequestOptions } from './transport.js';
export * from './types.js';

/**
 * What the tests of other packages (the partner SDK's) may use of the server, exported as
 * `@eds/server/test-kit`: a real server on loopback with its fixture builder and the standard
 * world, the webhook harness and delivery worker, a few writers for data the fixtures do not
 * make, and the contract's tables to compare copies against. Those tests depend on this list,
 * not on the server's file layout.
 */
export { generateToken } from '../../src/auth/token.js';
export { REASON_CODES } from '../../src/contract/reasons.js';
export {
  WEBHOOK_API_VERSION,
  WEBHOOK_EVENT_TYPE,
  WEBHOOK_TIMESTAMP_TOLERANCE_SECONDS,
} from '../../src/contract/webhook.js';
export { StorageUnavailableError } from '../../src/media/storage.js';
export { applyReadModelChanges } from '../../src/readModel/write/changes.js';
export { upsertEncounters } from '../../src/store/clinicalWrites.js';
export { redeliverEvent } from '../../src/webhooks/deliveryOps.js';
export { buildEventBody } from '../../src/webhooks/events.js';
export { signedHeaders } from '../../src/webhooks/signer.js';
export { startDeliveryWorker } from '../../src/webhooks/worker.js';
export { createHarness, type Harness } from '../webhooks/support/harness.js';
export { freePort } from './processes.js';
export { startTestServer, type TestServer } from './server.js';
export { AUDIO_BYTES, buildWorld, type World } from './world.js';

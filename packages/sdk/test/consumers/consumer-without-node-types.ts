// A partner's strict TypeScript project with no @types/node (a browser- or edge-typed build:
// lib ES2023 and DOM only, exactOptionalPropertyTypes, no skipLibCheck). It only type-checks:
// every public entry point, the webhook adapters included, must compile without Node's types.
import { EdsApiError, EncounterDataClient, type ErrorCode } from '@eds/sdk';
import {
  createNodeWebhookHandler,
  expressWebhookHandler,
  type FastifyLike,
  type IncomingMessageLike,
  MemoryDedupeStore,
  readRawBody,
  registerFastifyWebhook,
  type ServerResponseLike,
  signWebhook,
  verifyWebhook,
  WEBHOOK_API_VERSION,
  WebhookDeduplicator,
} from '@eds/sdk/webhooks';

export async function firstReasonCode(apiKey: string): Promise<ErrorCode | undefined> {
  const eds = new EncounterDataClient({ baseUrl: 'https://eds.example.com', apiKey });
  try {
    await eds.listEncounters({ limit: 1 });
    return undefined;
  } catch (error) {
    return error instanceof EdsApiError ? error.reasonCode : undefined;
  }
}

const secret = 'whsec_example';
const dedupe = new WebhookDeduplicator({ store: new MemoryDedupeStore() });
const onEvent = () => undefined;

export const nodeHandler: (req: IncomingMessageLike, res: ServerResponseLike) => void =
  createNodeWebhookHandler({ secret, onEvent, dedupe });
export const expressHandler = expressWebhookHandler({ secret: [secret, 'whsec_previous'], onEvent });
export const mount = (app: FastifyLike) =>
  registerFastifyWebhook(app, { url: '/webhooks/eds', secret, onEvent });

export async function text(req: IncomingMessageLike): Promise<string> {
  return (await readRawBody(req)).toString('utf8');
}

const signed = signWebhook({ event: { id: 'evt_1', api_version: WEBHOOK_API_VERSION }, secret });
export const eventId: string = verifyWebhook({
  rawBody: signed.rawBody,
  headers: signed.headers,
  secret,
}).eventId;

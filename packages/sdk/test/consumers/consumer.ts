// A partner's TypeScript project (strict, exactOptionalPropertyTypes, noUncheckedIndexedAccess,
// no skipLibCheck): the installed @eds/sdk's declarations, then the compiled code against a live
// server. Prints what it saw as one JSON line; package.test.ts compares it with the server's data.
import { EdsApiError, type Encounter, EncounterDataClient, type ReasonCode } from '@eds/sdk';
import { signWebhook, type VerifiedWebhook, verifyWebhook, WEBHOOK_API_VERSION } from '@eds/sdk/webhooks';

const [encounterId, transcriptDocId] = process.argv.slice(2);
if (!encounterId || !transcriptDocId) throw new Error('usage: consumer <encounter_id> <document_id>');
const eds = new EncounterDataClient({
  baseUrl: process.env['EDS_BASE_URL'] ?? '',
  apiKey: process.env['EDS_API_KEY'] ?? '',
});
const list = await eds.listEncounters({ limit: 1, sort_order: 'asc' });
const first: Encounter | undefined = list.items[0];
const transcript = await eds.getTranscript(encounterId, transcriptDocId);
const audio = await eds.getAudioLink(encounterId, transcriptDocId);
let notFound: ReasonCode | string = 'no error';
try {
  await eds.getEncounter('enc_does_not_exist');
} catch (error) {
  notFound = error instanceof EdsApiError ? error.reasonCode : String(error);
}
const signed = signWebhook({
  event: { id: 'evt_consumer', api_version: WEBHOOK_API_VERSION },
  secret: 'whsec_consumer',
});
const verified: VerifiedWebhook = verifyWebhook({
  rawBody: signed.rawBody,
  headers: signed.headers,
  secret: 'whsec_consumer',
});
console.log(
  JSON.stringify({
    total: list.total,
    turns: transcript.transcript.turns.length,
    audio: audio.url.startsWith('http') && first !== undefined,
    notFound,
    webhook: verified.eventId,
  }),
);

// A partner's plain JavaScript (ES module) project: the installed @eds/sdk against a live server.
// Prints what it saw as one JSON line; package.test.ts compares it with the server's data.
import { EdsApiError, EncounterDataClient } from '@eds/sdk';
import { signWebhook, verifyWebhook, WEBHOOK_API_VERSION } from '@eds/sdk/webhooks';

const [encounterId, transcriptDocId] = process.argv.slice(2);
const eds = new EncounterDataClient({ baseUrl: process.env.EDS_BASE_URL, apiKey: process.env.EDS_API_KEY });
const list = await eds.listEncounters({ limit: 1 });
const transcript = await eds.getTranscript(encounterId, transcriptDocId);
const audio = await eds.getAudioLink(encounterId, transcriptDocId);
const notFound = await eds.getEncounter('enc_does_not_exist').catch((error) => error);
const event = { id: 'evt_consumer', api_version: WEBHOOK_API_VERSION };
const signed = signWebhook({ event, secret: 'whsec_consumer' });
const verified = verifyWebhook({
  rawBody: signed.rawBody,
  headers: signed.headers,
  secret: 'whsec_consumer',
});
console.log(
  JSON.stringify({
    total: list.total,
    turns: transcript.transcript.turns.length,
    audio: audio.url.startsWith('http'),
    notFound: notFound instanceof EdsApiError ? notFound.reasonCode : String(notFound),
    webhook: verified.eventId,
  }),
);

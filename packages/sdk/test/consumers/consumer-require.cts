// The same package seen from a CommonJS TypeScript file: the `require` condition's declarations.
import sdk = require('@eds/sdk');
import webhooks = require('@eds/sdk/webhooks');

export const client: sdk.EncounterDataClient = new sdk.EncounterDataClient({
  baseUrl: 'http://x',
  apiKey: 'k',
});
export const tolerance: number = webhooks.DEFAULT_TOLERANCE_SECONDS;

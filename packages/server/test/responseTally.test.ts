/**
 * Responses are counted in cells and added to eds_http_responses_total when it is scraped: every
 * response counted once, whatever the number of scrapes between them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createMetrics } from '../src/metrics.js';

async function counted(metrics: ReturnType<typeof createMetrics>) {
  const { values } = await metrics.httpResponses.get();
  return Object.fromEntries(
    values.map((v) => [`${v.labels.route} ${v.labels.status} ${v.labels.reason_code}`, v.value]),
  );
}

test('happy: each response is counted once under its route, status and reason code across scrapes', async () => {
  const metrics = createMetrics();
  for (let i = 0; i < 3; i++) metrics.responses.count('getEncounter', 200, '');
  metrics.responses.count('getEncounter', 404, 'encounter_not_found');
  metrics.responses.count('listEncounters', 401, 'malformed_token');
  const first = {
    'getEncounter 200 ': 3,
    'getEncounter 404 encounter_not_found': 1,
    'listEncounters 401 malformed_token': 1,
  };
  assert.deepEqual(await counted(metrics), first);
  assert.deepEqual(await counted(metrics), first, 'a scrape with nothing new changes nothing');
  metrics.responses.count('getEncounter', 200, '');
  metrics.responses.count('media_host', 403, 'link_expired');
  assert.deepEqual(await counted(metrics), {
    ...first,
    'getEncounter 200 ': 4,
    'media_host 403 link_expired': 1,
  });
});

/**
 * The admin port's /metrics as Prometheus reads it: Prometheus' own linter (promtool, when
 * installed) and the same naming rules checked here, so they hold without it; and requests
 * counted under the route that served them.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { after, test } from 'node:test';
import { type AdminServer, startAdminServer } from '../src/http/adminServer.js';
import { connectionLimitFor } from '../src/http/connectionLimit.js';
import { startTestServer } from './support/server.js';
import { useServerWithWorld } from './support/serverWithWorld.js';
import { pathFor } from './support/world.js';

const PROMTOOL = '/usr/bin/promtool';

let admin: AdminServer;
let exposition: string;

// The collection histogram too (an operator's choice), so the linters check every metric there is.
const GC_PAUSES_ON = { env: { EDS_METRICS_GC_PAUSES: 'true' } };

const given = useServerWithWorld('sqlite', GC_PAUSES_ON, async ({ server, world }) => {
  admin = await startAdminServer(server.services, connectionLimitFor(server.services));
  // Traffic of every kind, so every labelled series has values to show.
  await server.api.get(pathFor('listEncounters', world), { token: world.token });
  await server.api.get(pathFor('getEncounter', world), { token: world.token });
  await server.api.get('/external/v1/encounters');
  for (const path of [
    '/healthz',
    '/readyz',
    '/docs/problems',
    '/docs/favicon.svg',
    '/openapi/v1/openapi.json',
  ]) {
    const r = await fetch(`${server.url}${path}`);
    assert.equal(r.status, 200, path);
    await r.arrayBuffer();
  }
  for (const path of ['/nope', '/docs/nope', '/external/v1/encounters/']) {
    const r = await fetch(`${server.url}${path}`);
    assert.equal(r.status, 404, path);
    await r.arrayBuffer();
  }
  const scraped = await fetch(`${admin.url}/metrics`);
  assert.equal(scraped.status, 200);
  exposition = await scraped.text();
});
after(() => admin.close());

test('happy: /metrics passes `promtool check metrics`', {
  skip: existsSync(PROMTOOL) ? false : `${PROMTOOL} is not installed (Debian package prometheus)`,
}, () => {
  const run = spawnSync(PROMTOOL, ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
  assert.equal(run.status, 0, `promtool: ${run.stdout}${run.stderr}`);
  assert.equal(`${run.stdout}${run.stderr}`.trim(), '');
});

/** Each metric family of an exposition: its name, type and whether it has help. */
function families(text: string): { name: string; type: string; help: boolean }[] {
  const helped = new Set([...text.matchAll(/^# HELP (\S+) \S/gm)].map((m) => m[1]!));
  return [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(([, name, type]) => ({
    name: name!,
    type: type!,
    help: helped.has(name!),
  }));
}

test('happy: counters, and only counters, are named …_total; every metric has help (the rules without promtool)', () => {
  const found = families(exposition);
  assert.ok(found.length > 20, 'the default and the service metrics are exposed');
  for (const { name, type, help } of found) {
    assert.match(name, /^eds_[a-z][a-z0-9_]*$/, name);
    assert.ok(help, `${name} has HELP text`);
    if (type === 'counter') assert.match(name, /_total$/, `counter ${name}`);
    else assert.doesNotMatch(name, /_total$/, `${type} ${name} is named like a counter`);
    if (type !== 'histogram' && type !== 'summary') {
      assert.doesNotMatch(name, /_(count|sum|bucket)$/, `${type} ${name} takes a histogram's suffix`);
    }
  }
  for (const kind of ['handles', 'requests', 'resources']) {
    assert.ok(
      found.some((f) => f.name === `eds_nodejs_active_${kind}` && f.type === 'gauge'),
      `active ${kind} are still exposed, by type`,
    );
  }
});

test('happy: health, readiness, docs and the OpenAPI document have route labels of their own; real 404s stay unmatched', async () => {
  const { values } = await given.server.services.metrics.httpResponses.get();
  const count = (route: string, status: number) =>
    values
      .filter((v) => v.labels.route === route && v.labels.status === status)
      .reduce((sum, v) => sum + v.value, 0);
  assert.equal(count('healthz', 200), 1);
  assert.equal(count('readyz', 200), 1);
  assert.equal(count('docs', 200), 2);
  assert.equal(count('openapi', 200) >= 1, true, 'the test client reads the document too');
  assert.equal(count('unmatched', 200), 0, 'no answer that was served is unmatched');
  assert.equal(count('unmatched', 404), 3, 'an unknown path, one under /docs, an empty ID');
  assert.equal(count('docs', 404), 0);
  assert.equal(count('getEncounter', 200), 1);
  assert.equal(count('listEncounters', 401), 1);
});

test('happy: the audit queue depth is what waits to be written when scraped', async () => {
  // A flush window longer than the test: the refusals' folded rows wait in the queue.
  const server = await startTestServer('sqlite', { env: { EDS_AUDIT_FLUSH_MS: '600000' } });
  try {
    const depth = async () => (await server.services.metrics.auditQueueDepth.get()).values[0]?.value;
    assert.equal(await depth(), 0);
    const junk = { token: 'eds_live_not-a-key' };
    await server.api.get('/external/v1/encounters', junk);
    await server.api.get('/external/v1/encounters', junk);
    await server.api.get('/external/v1/encounters/enc_anything', junk);
    assert.equal(await depth(), 2, 'one folded row per route, status and reason');
  } finally {
    await server.close();
  }
});

/**
 * Audit: one record per request that got past bearer parsing, with IDs only; a keyed request's
 * record is in the store when its answer arrives, refusals naming no key are folded per flush
 * window (flushed here by hand: the window is a long one, so no test depends on timing). Logs:
 * JSON lines without tokens, digests, signed links or PHI.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { digestToken } from '../../src/auth/digest.js';
import { readAudit } from '../../src/store/audit.js';
import { TEST_DIGEST_SECRET } from '../support/fixtures.js';
import { useServerWithWorld } from '../support/serverWithWorld.js';
import { forEachStore } from '../support/stores.js';
import { pathFor } from '../support/world.js';

forEachStore('audit and logs', (kind) => {
  const given = useServerWithWorld(kind, { env: { EDS_AUDIT_FLUSH_MS: '600000' } });

  async function auditRows() {
    const rows = [];
    for await (const row of readAudit(given.server.services.store.db, {})) rows.push(row);
    return rows;
  }

  test('happy: each request past bearer parsing leaves one audit record with route, IDs, status and reason', async () => {
    const ok = await given.server.api.get(pathFor('getDocument', given.world), { token: given.world.token });
    const denied = await given.server.api.get(
      pathFor('getEncounter', given.world, { encounter: given.world.encounterB }),
      {
        token: given.world.token,
      },
    );
    const unknown = await given.server.api.get('/external/v1/encounters', { token: 'eds_live_junk' });
    const anonymous = await given.server.api.get('/external/v1/encounters');
    await given.server.flushAudit();
    const rows = await auditRows();
    const byRequest = new Map(rows.map((r) => [r.request_id, r]));
    const okRow = byRequest.get(ok.headers.get('x-request-id')!);
    assert.ok(okRow);
    assert.equal(okRow.route, 'getDocument');
    assert.equal(okRow.organization_id, given.world.orgA);
    assert.equal(okRow.encounter_id, given.world.encounter);
    assert.equal(okRow.document_id, given.world.note);
    assert.equal(okRow.status, 200);
    assert.equal(okRow.reason_code, null);
    const deniedRow = byRequest.get(denied.headers.get('x-request-id')!);
    assert.equal(deniedRow?.reason_code, 'cross_organization_denied');
    assert.equal(deniedRow?.status, 403);
    const unknownRow = byRequest.get(unknown.headers.get('x-request-id')!);
    assert.equal(unknownRow?.reason_code, 'malformed_token');
    assert.equal(unknownRow?.key_id, null);
    assert.equal(
      byRequest.has(anonymous.headers.get('x-request-id')!),
      false,
      'missing_bearer is not audited',
    );
  });

  test('security: a flood of junk keys within one flush window is one audit row with its exact count', async () => {
    const since = Date.now();
    const junk = Array.from({ length: 200 }, (_, i) =>
      given.server.api.get('/external/v1/encounters', {
        token: i % 2 ? 'eds_live_junk' : `eds_live_${'0'.repeat(37)}A`,
      }),
    );
    const good = Array.from({ length: 5 }, () =>
      given.server.api.get(pathFor('getEncounter', given.world), { token: given.world.token }),
    );
    const answers = await Promise.all([...junk, ...good]);
    assert.ok(answers.slice(0, 200).every((r) => r.status === 401));
    await given.server.flushAudit();
    const rows = (await auditRows()).filter((r) => r.at >= since);
    const refused = rows.filter((r) => r.reason_code === 'malformed_token');
    assert.equal(
      refused.reduce((n, r) => n + r.request_count, 0),
      200,
      'every refused request is counted',
    );
    assert.equal(refused.length, 1, `${refused.length} rows for 200 refusals in one window`);
    assert.ok(refused.every((r) => r.key_id === null && r.organization_id === null));
    const served = rows.filter((r) => r.route === 'getEncounter' && r.status === 200);
    assert.equal(served.length, 5, 'requests with a key keep one row each');
  });

  test('security: no token, digest, signed link or PHI in logs or the audit log', async () => {
    const audio = await given.server.api.get(pathFor('getAudio', given.world), { token: given.world.token });
    const transcript = await given.server.api.get(pathFor('getTranscript', given.world), {
      token: given.world.token,
    });
    const encounter = await given.server.api.get(pathFor('getEncounter', given.world), {
      token: given.world.token,
    });
    await given.server.api.get('/external/v1/encounters?x=1', { token: given.world.token });
    const link = new URL(audio.body.audio_url);
    const secrets = [
      given.world.token,
      given.world.token.slice(9, 30),
      digestToken(given.world.token, TEST_DIGEST_SECRET),
      link.search.slice(1),
      ...[...link.searchParams.values()].filter((v) => v.length > 12),
      encounter.body.encounter.patient.last_name,
      transcript.body.transcript.turns[0].text,
    ];
    const text = given.server.logs.join('\n') + JSON.stringify(await auditRows());
    assert.ok(given.server.logs.length > 0);
    for (const secret of secrets)
      assert.equal(text.includes(secret), false, `leaked: ${secret.slice(0, 12)}…`);
    for (const line of given.server.logs) JSON.parse(line);
  });

  test("happy: PostgreSQL names the audit writer's connection apart from the request pool's", {
    skip: kind !== 'postgres' && 'PostgreSQL only',
  }, async () => {
    // A keyed request makes the audit writer commit, so its connection is open.
    const ok = await given.server.api.get(pathFor('getDocument', given.world), { token: given.world.token });
    assert.equal(ok.status, 200);
    const wanted = (names: string[]) =>
      names.includes('eds') &&
      names.includes('eds audit writer') &&
      // The revocation LISTEN connection is opened in the background at start-up.
      names.some((name) => name.startsWith('eds listen '));
    let names: string[] = [];
    while (!wanted(names)) {
      if (names.length > 0) await new Promise((resolve) => setTimeout(resolve, 20));
      const { rows } = await sql<{ application_name: string }>`
        SELECT DISTINCT application_name FROM pg_stat_activity WHERE datname = current_database()`.execute(
        given.server.services.store.db,
      );
      names = rows.map((r) => r.application_name).sort();
    }
  });
});

/**
 * A revoked or disabled key stops working on a running server soon after another process
 * changes it: the server's key cache is invalidated across connections (SQLite's change counter,
 * PostgreSQL NOTIFY) well within the 5-second bound, which remains the fallback.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openStore, type Store } from '../../src/database/connection.js';
import { changeApiKeyState } from '../../src/domain/apiKeys.js';
import { updateOrganizationSettings } from '../../src/store/organizations.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { forEachStore } from '../support/stores.js';

forEachStore('revocation', (kind) => {
  let server: TestServer;
  let other: Store;
  before(async () => {
    server = await startTestServer(kind);
    other = openStore(server.database.config);
  });
  after(async () => {
    await other.close();
    await server.close();
  });

  async function untilStatus(
    token: string,
    status: number,
    limitMs: number,
  ): Promise<{ elapsed: number; code: string }> {
    const started = Date.now();
    for (;;) {
      const r = await server.api.get('/external/v1/encounters', { token });
      if (r.status === status) return { elapsed: Date.now() - started, code: r.body.reason_code };
      if (Date.now() - started > limitMs) throw new Error(`still ${r.status} after ${limitMs} ms`);
      await new Promise((res) => setTimeout(res, 25));
    }
  }

  test('security: a key revoked by another connection is refused within 1 s; disable/enable follows too', async () => {
    const org = await server.fixtures.organization();
    const { id, token } = await server.fixtures.key(org);
    assert.equal((await server.api.get('/external/v1/encounters', { token })).status, 200);
    // Warm: the key is now cached in the server.
    await changeApiKeyState(other.db, id, 'disabled', Date.now());
    const disabled = await untilStatus(token, 401, 1000);
    assert.equal(disabled.code, 'disabled_key');
    await changeApiKeyState(other.db, id, 'active', Date.now());
    await untilStatus(token, 200, 1000);
    await changeApiKeyState(other.db, id, 'revoked', Date.now());
    const revoked = await untilStatus(token, 401, 1000);
    assert.equal(revoked.code, 'revoked_key');
    await assert.rejects(changeApiKeyState(other.db, id, 'active', Date.now()), /revocation is final/);
  });

  test('security: an organization losing its allowlisting is refused within 1 s', async () => {
    const org = await server.fixtures.organization();
    const { token } = await server.fixtures.key(org);
    assert.equal((await server.api.get('/external/v1/encounters', { token })).status, 200);
    await updateOrganizationSettings(other.db, org, { allowlisted: false }, Date.now());
    const r = await untilStatus(token, 403, 1000);
    assert.equal(r.code, 'organization_not_allowlisted');
  });
});

/**
 * Rotating the key digest secret without re-issuing keys (decisions.md, Rotation), with real
 * `eds serve` processes restarted the way an operator would: with EDS_KEY_DIGEST_SECRET set to a
 * new secret and EDS_KEY_DIGEST_SECRET_PREVIOUS (here through its _FILE form) to the old one,
 * existing keys keep working and are re-digested on their next use, also when two processes do
 * it at once; `eds key list` and the metric count the keys still on the old secret; after a
 * restart with the new secret alone, the keys that were used work and the others do not.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { digestSecretId, digestToken } from '../../src/auth/digest.js';
import type { Store } from '../../src/database/connection.js';
import { cliEnv, edsJson, runEds } from '../support/cli.js';
import { FixtureBuilder, TEST_DIGEST_SECRET } from '../support/fixtures.js';
import { startServeProcess } from '../support/processes.js';
import { createTestStore, forEachStore, type TestDatabase } from '../support/stores.js';

const NEW_SECRET = 'a-new-digest-secret-for-the-rotation-test-0123456789';

async function statusOf(url: string, token: string): Promise<string> {
  const r = await fetch(`${url}/external/v1/encounters?limit=1`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const body = (await r.json()) as { reason_code?: string };
  return `${r.status}${body.reason_code ? ` ${body.reason_code}` : ''}`;
}

interface KeyList {
  keys: { key_id: string; digest_secret: string }[];
  digest_secret: { previous_configured: boolean; keys_off_current: number };
}

forEachStore('digest secret rotation', (kind) => {
  let store: Store & { database: TestDatabase; close(): Promise<void> };
  let fixtures: FixtureBuilder;
  let oldEnv: Record<string, string>;
  let rotatedEnv: Record<string, string>;
  let newOnlyEnv: Record<string, string>;
  before(async () => {
    store = await createTestStore(kind);
    fixtures = new FixtureBuilder(store.db);
    const previousFile = join(store.database.dir, 'previous-digest-secret');
    writeFileSync(previousFile, `${TEST_DIGEST_SECRET}\n`, { mode: 0o600 });
    oldEnv = cliEnv(store.database);
    rotatedEnv = cliEnv(store.database, {
      EDS_KEY_DIGEST_SECRET: NEW_SECRET,
      EDS_KEY_DIGEST_SECRET_PREVIOUS_FILE: previousFile,
    });
    newOnlyEnv = cliEnv(store.database, { EDS_KEY_DIGEST_SECRET: NEW_SECRET });
  });
  after(() => store.close());

  test('a restart with the secret rotated: old keys work, move to the new secret on use (two processes at once), then work with it alone', async () => {
    const org = await fixtures.organization();
    const used = await fixtures.key(org);
    const idle = await fixtures.key(org);
    // Stored before fingerprints were recorded (made before migration 007): not known yet.
    await store.db
      .updateTable('api_keys')
      .set({ digest_secret_id: null })
      .where('id', '=', idle.id)
      .execute();

    const before = await startServeProcess(oldEnv);
    try {
      assert.equal(await statusOf(before.url, used.token), '200');
    } finally {
      await before.stop();
    }

    const servers = await Promise.all(
      [1, 2].map(() => startServeProcess({ ...rotatedEnv, EDS_ADMIN_PORT: '0' })),
    );
    try {
      const listed = await edsJson<KeyList>(['key', 'list', '--org', org], rotatedEnv);
      assert.deepEqual(listed.digest_secret, { previous_configured: true, keys_off_current: 2 });

      // Both processes verify (and re-digest) the same old key at the same moment.
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => statusOf(servers[i % 2]!.url, used.token)),
      );
      assert.deepEqual(answers, Array(8).fill('200'));
      const row = await store.db
        .selectFrom('api_keys')
        .select(['digest', 'digest_secret_id'])
        .where('id', '=', used.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.digest, digestToken(used.token, NEW_SECRET));
      assert.equal(row.digest_secret_id, digestSecretId(NEW_SECRET));
      for (const s of servers) assert.equal(await statusOf(s.url, used.token), '200');

      const after = await edsJson<KeyList>(['key', 'list', '--org', org], rotatedEnv);
      assert.equal(after.digest_secret.keys_off_current, 1);
      assert.equal(after.keys.find((k) => k.key_id === used.id)?.digest_secret, 'current');
      assert.equal(after.keys.find((k) => k.key_id === idle.id)?.digest_secret, 'previous_or_unknown');
      const metrics = await Promise.all(
        servers.map(async (s) => (await fetch(`${s.adminUrl}/metrics`)).text()),
      );
      for (const text of metrics) assert.match(text, /^eds_api_keys_off_current_digest_secret 1$/m);
      // Exactly one of the two processes moved it; the other found it moved.
      const moved = metrics.map((text) => Number(/^eds_api_key_redigests_total (\d+)$/m.exec(text)?.[1]));
      assert.equal(moved[0]! + moved[1]!, 1);
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }

    // The previous secret dropped: the key used meanwhile works with the new secret alone; the
    // one never used (still counted above) does not — which is what the count warns about.
    const alone = await startServeProcess(newOnlyEnv);
    try {
      assert.equal(await statusOf(alone.url, used.token), '200');
      assert.equal(await statusOf(alone.url, idle.token), '401 invalid_key');
    } finally {
      await alone.stop();
    }
  });

  test('a previous secret equal to the current one is refused at start-up, naming the variable', async () => {
    const same = cliEnv(store.database, { EDS_KEY_DIGEST_SECRET_PREVIOUS: TEST_DIGEST_SECRET });
    const r = await runEds(['key', 'list', '--org', 'org_any'], same);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /EDS_KEY_DIGEST_SECRET_PREVIOUS equals EDS_KEY_DIGEST_SECRET/);
    assert.equal(r.stdout, '');
  });
});

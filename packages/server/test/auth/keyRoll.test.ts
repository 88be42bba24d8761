/**
 * `eds key roll` (decisions.md, Rotation), run as a real process against a running server whose
 * clock the test controls: the old key keeps working through the grace, its answers carrying
 * `Eds-Key-Expires-At`, and answers `expired_key` once the grace is over; the successor works
 * throughout. Bad input changes nothing.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { getApiKey } from '../../src/store/apiKeys.js';
import { parseRfc3339 } from '../../src/time.js';
import { cliEnv, edsJson, runEds } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { forEachStore } from '../support/stores.js';

const ROUTE = '/external/v1/encounters';
const HOUR_S = 3600;

interface RollOutput {
  key_id: string;
  token: string;
  scopes: string[];
  kind: string;
  expires_at: string | null;
  rolled_from: string;
  old_key_expires_at: string;
}

forEachStore('key roll', (kind) => {
  let server: TestServer;
  let env: Record<string, string>;
  /** The server's clock runs this far ahead of the real one; tests move it past deadlines. */
  let offsetMs = 0;
  before(async () => {
    server = await startTestServer(kind, { clock: () => Date.now() + offsetMs });
    env = cliEnv(server.database);
  });
  after(async () => {
    await server.close();
  });

  interface Answer {
    status: number;
    reason?: string;
    expiresAt: string | null;
  }

  async function call(token: string): Promise<Answer> {
    const r = await fetch(`${server.url}${ROUTE}`, { headers: { authorization: `Bearer ${token}` } });
    const body = (await r.json()) as { reason_code?: string };
    return { status: r.status, reason: body.reason_code, expiresAt: r.headers.get('eds-key-expires-at') };
  }

  /** Callers hammering the API with `token` until `stop` turns true; every answer is kept. */
  function load(token: string, callers: number, stop: () => boolean): Promise<Answer[]> {
    const answers: Answer[] = [];
    const loop = async () => {
      while (!stop()) answers.push(await call(token));
    };
    return Promise.all(Array.from({ length: callers }, loop)).then(() => answers);
  }

  test('a key rolled under load: no request of the old key refused before the deadline, every one refused after', async () => {
    const org = await server.fixtures.organization();
    const scopes = ['encounters:read', 'patients:read', 'documents:read'] as const;
    const old = await server.fixtures.key(org, { scopes: [...scopes] });
    assert.equal((await call(old.token)).status, 200);

    let seenDeadline = false;
    const during = load(old.token, 4, () => seenDeadline);
    const rolled = await edsJson<RollOutput>(['key', 'roll', old.id, '--grace', String(HOUR_S)], env);
    // Keep the load on until the server announces the deadline (cache invalidation: ≤ 5 s).
    const until = Date.now() + 10_000;
    while (!seenDeadline) {
      const answer = await call(old.token);
      if (answer.expiresAt !== null) seenDeadline = true;
      else if (Date.now() > until) throw new Error('the old key never carried Eds-Key-Expires-At');
    }
    const answers = await during;
    assert.ok(answers.length > 0);
    for (const a of answers) assert.equal(a.status, 200, `refused during the grace: ${a.reason}`);
    for (const a of answers.filter((x) => x.expiresAt !== null)) {
      assert.equal(a.expiresAt, rolled.old_key_expires_at);
    }
    assert.match(rolled.old_key_expires_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    // Refusals after the key is identified carry the deadline too (this key lacks recordings:read).
    const audio = await fetch(`${server.url}/external/v1/encounters/enc_x/documents/doc_x/audio`, {
      headers: { authorization: `Bearer ${old.token}` },
    });
    assert.equal(audio.status, 403);
    assert.equal(audio.headers.get('eds-key-expires-at'), rolled.old_key_expires_at);
    const successor = await call(rolled.token);
    assert.equal(successor.status, 200);
    assert.equal(successor.expiresAt, null, 'the successor carries no deadline');
    assert.deepEqual(rolled.scopes, scopes);
    assert.equal(rolled.rolled_from, old.id);

    // Past the deadline on the server's clock: every request of the old key is refused.
    const deadline = parseRfc3339(rolled.old_key_expires_at)!.ms;
    offsetMs = deadline - Date.now() + 1000;
    let calls = 0;
    const afterDeadline = await load(old.token, 4, () => ++calls > 40);
    for (const a of afterDeadline) {
      assert.equal(a.status, 401);
      assert.equal(a.reason, 'expired_key');
    }
    assert.equal((await call(rolled.token)).status, 200, 'the successor keeps working');
    offsetMs = 0;
  });

  test('--grace 0 stops the old key at once on a running server; the list shows the pair', async () => {
    const org = await server.fixtures.organization();
    const expiresAt = Date.now() + 30 * 86_400_000;
    const old = await server.fixtures.key(org, { expiresAt });
    assert.equal((await call(old.token)).status, 200);
    const rolled = await edsJson<RollOutput>(['key', 'roll', old.id, '--grace', '0'], env);
    assert.equal(rolled.expires_at, new Date(expiresAt).toISOString(), 'same expiry as the old key');
    const until = Date.now() + 5000;
    for (;;) {
      const a = await call(old.token);
      if (a.status === 401) {
        assert.equal(a.reason, 'expired_key');
        break;
      }
      if (Date.now() > until) throw new Error('the old key still works 5 s after --grace 0');
    }
    assert.equal((await call(rolled.token)).status, 200);

    const list = await edsJson<{ keys: Record<string, unknown>[] }>(['key', 'list', '--org', org], env);
    const oldView = list.keys.find((k) => k.key_id === old.id)!;
    const newView = list.keys.find((k) => k.key_id === rolled.key_id)!;
    assert.equal(oldView.rolled_to, rolled.key_id);
    assert.equal(oldView.grace_ends_at, rolled.old_key_expires_at);
    assert.equal(newView.rolled_from, old.id);
    assert.equal(newView.grace_ends_at, null);
    assert.deepEqual(newView.scopes, oldView.scopes);
    assert.equal(newView.kind, oldView.kind);
  });

  test('bad input changes nothing and says why: a bad --grace, a revoked key, a key already rolled', async () => {
    const org = await server.fixtures.organization();
    const key = await server.fixtures.key(org);
    const revoked = await server.fixtures.key(org, { state: 'revoked' });
    const snapshot = async () =>
      server.services.store.db
        .selectFrom('api_keys')
        .selectAll()
        .where('organization_id', '=', org)
        .execute();
    const before = await snapshot();

    const refusals: [string[], RegExp][] = [
      [['key', 'roll', key.id, '--grace=-10'], /cannot be negative/],
      [['key', 'roll', key.id, '--grace', 'tomorrow'], /whole seconds/],
      [['key', 'roll', key.id, '--grace', '2.5'], /whole seconds/],
      [['key', 'roll', revoked.id], /revoked/],
      [['key', 'roll', 'key_doesnotexist'], /does not exist/],
    ];
    for (const [args, message] of refusals) {
      const r = await runEds(args, env);
      assert.notEqual(r.code, 0, args.join(' '));
      assert.match(r.stderr, message);
      assert.equal(r.stdout, '');
    }
    assert.deepEqual(await snapshot(), before);

    const rolled = await edsJson<RollOutput>(['key', 'roll', key.id], env);
    const afterRoll = await snapshot();
    const again = await runEds(['key', 'roll', key.id], env);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /already rolled/);
    assert.deepEqual(await snapshot(), afterRoll);
    // The default grace is a day.
    const old = await getApiKey(server.services.store.db, key.id);
    const rolledAt = (await getApiKey(server.services.store.db, rolled.key_id))!.createdAt;
    assert.equal(old!.expiresAt, rolledAt + 86_400_000);
  });
});

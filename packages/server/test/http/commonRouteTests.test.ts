/**
 * The same authentication, enablement, scope and query matrix, run on every one of the five
 * routes (from the contract's route table), on every store. Tests are named by outcome.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateToken } from '../../src/auth/token.js';
import { ROUTE_LIST, SCOPES } from '../../src/contract/routes.js';
import type { ApiResponse } from '../support/apiClient.js';
import { asApiResponse, rawRequest, requestText } from '../support/rawHttp.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { useServerWithWorld } from '../support/serverWithWorld.js';
import { forEachStore } from '../support/stores.js';
import { buildWorld, pathFor, type World } from '../support/world.js';

/** `field`: the query parameter the body must name; null for authentication, scopes and lookups. */
function assertProblem(
  response: ApiResponse,
  status: number,
  reasonCode: string,
  field: string | null = null,
): void {
  assert.equal(
    response.status,
    status,
    `expected ${status} ${reasonCode}, got ${response.status} ${response.text}`,
  );
  assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  assert.equal(response.body.reason_code, reasonCode);
  assert.equal(response.body.status, status);
  assert.equal(response.body.request_id, response.headers.get('x-request-id'));
  assert.equal(response.body.message, response.body.detail, 'message is the same sentence as detail');
  assert.equal(response.body.field, field, `field of ${reasonCode}`);
  // RFC 9110: a 401 carries a challenge, and only a 401 (RFC 6750's bearer form).
  const challenge =
    status !== 401
      ? null
      : reasonCode === 'missing_bearer'
        ? 'Bearer realm="eds"'
        : 'Bearer realm="eds", error="invalid_token"';
  assert.equal(response.headers.get('www-authenticate'), challenge);
}

forEachStore('every route', (kind) => {
  const given = useServerWithWorld(kind);
  const tokens: Record<string, string> = {};

  before(async () => {
    const f = given.server.fixtures;
    const notAllowlisted = await f.organization({ allowlisted: false });
    const noRoutes = await f.organization({ routes: [] });
    const keysOff = await f.organization({ apiKeysEnabled: false });
    tokens.revoked = (await f.key(given.world.orgA, { state: 'revoked' })).token;
    tokens.disabled = (await f.key(given.world.orgA, { state: 'disabled' })).token;
    tokens.expired = (await f.key(given.world.orgA, { expiresAt: Date.now() - 1000 })).token;
    tokens.user = (await f.key(given.world.orgA, { kind: 'user' })).token;
    tokens.test = (await f.key(given.world.orgA, { environment: 'test' })).token;
    tokens.notAllowlisted = (await f.key(notAllowlisted)).token;
    tokens.noRoutes = (await f.key(noRoutes)).token;
    tokens.keysOff = (await f.key(keysOff)).token;
    // Revoked and expired: revocation is checked first (decisions.md order).
    tokens.revokedExpired = (await f.key(given.world.orgA, { state: 'revoked', expiresAt: 1 })).token;
    tokens.userKeysOff = (await f.key(keysOff, { kind: 'user' })).token;
    for (const scope of SCOPES) {
      tokens[`without:${scope}`] = (
        await f.key(given.world.orgA, { scopes: SCOPES.filter((s) => s !== scope) })
      ).token;
    }
  });

  for (const route of ROUTE_LIST) {
    describe(`${route.id} (${route.path})`, () => {
      const path = () => pathFor(route, given.world);

      test('happy: a full-scope organization key gets 200 with the API headers', async () => {
        const r = await given.server.api.get(path(), { token: given.world.token });
        assert.equal(r.status, 200, r.text);
        assert.equal(r.headers.get('cache-control'), 'no-store');
        assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
        assert.match(r.headers.get('x-request-id') ?? '', /^req_[0-9A-Za-z]{22}$/);
      });

      test('error: no Authorization header, another scheme, or empty credentials → 401 missing_bearer', async () => {
        assertProblem(await given.server.api.get(path()), 401, 'missing_bearer');
        assertProblem(
          await given.server.api.get(path(), { headers: { authorization: `Basic ${given.world.token}` } }),
          401,
          'missing_bearer',
        );
        assertProblem(
          await given.server.api.get(path(), { headers: { authorization: 'Bearer ' } }),
          401,
          'missing_bearer',
        );
        assertProblem(
          await given.server.api.get(path(), { headers: { authorization: 'Bearer a b' } }),
          401,
          'missing_bearer',
        );
      });

      test('error: an eds_test_ key on a live deployment → 401 test_prefix_not_allowed, even if malformed', async () => {
        assertProblem(
          await given.server.api.get(path(), { token: tokens.test }),
          401,
          'test_prefix_not_allowed',
        );
        assertProblem(
          await given.server.api.get(path(), { token: 'eds_test_short' }),
          401,
          'test_prefix_not_allowed',
        );
      });

      test('error: wrong shape or checksum → 401 malformed_token', async () => {
        const flipped = given.world.token.slice(0, -1) + (given.world.token.endsWith('A') ? 'B' : 'A');
        for (const token of [
          flipped,
          'eds_live_short',
          'not-a-key',
          `${given.world.token}x`,
          given.world.token.replace('eds_live_', 'eds_prod_'),
        ]) {
          assertProblem(await given.server.api.get(path(), { token }), 401, 'malformed_token');
        }
      });

      test('error: two Authorization headers → 401 malformed_token, whatever their order and values', async () => {
        const pairs = [
          [`Bearer ${given.world.token}`, 'Bearer junk'],
          ['Bearer junk', `Bearer ${given.world.token}`],
          [`Bearer ${given.world.tokenB}`, `Bearer ${given.world.token}`],
          [`Bearer ${given.world.token}`, `Bearer ${given.world.token}`],
          [`Bearer ${given.world.token}`, ''],
        ];
        for (const [first, second] of pairs) {
          const answer = await rawRequest(
            given.server.url,
            requestText(`GET ${path()} HTTP/1.1`, [
              'Host: 127.0.0.1',
              `Authorization: ${first}`,
              `authorization: ${second}`,
            ]),
          );
          assertProblem(asApiResponse(answer), 401, 'malformed_token');
        }
      });

      test('error: a well-formed key that was never issued → 401 invalid_key', async () => {
        assertProblem(
          await given.server.api.get(path(), { token: generateToken('live') }),
          401,
          'invalid_key',
        );
      });

      test('error: key states → revoked_key, disabled_key, expired_key (revoked before expired)', async () => {
        assertProblem(await given.server.api.get(path(), { token: tokens.revoked }), 401, 'revoked_key');
        assertProblem(await given.server.api.get(path(), { token: tokens.disabled }), 401, 'disabled_key');
        assertProblem(await given.server.api.get(path(), { token: tokens.expired }), 401, 'expired_key');
        assertProblem(
          await given.server.api.get(path(), { token: tokens.revokedExpired }),
          401,
          'revoked_key',
        );
      });

      test('error: organization with API keys off → 401 api_keys_disabled, before the key-kind check', async () => {
        assertProblem(
          await given.server.api.get(path(), { token: tokens.keysOff }),
          401,
          'api_keys_disabled',
        );
        assertProblem(
          await given.server.api.get(path(), { token: tokens.userKeysOff }),
          401,
          'api_keys_disabled',
        );
      });

      test('security: a user-scoped key → 403 org_scope_only_required', async () => {
        assertProblem(
          await given.server.api.get(path(), { token: tokens.user }),
          403,
          'org_scope_only_required',
        );
      });

      test('security: route enablement → organization_not_allowlisted, route_not_allowed', async () => {
        assertProblem(
          await given.server.api.get(path(), { token: tokens.notAllowlisted }),
          403,
          'organization_not_allowlisted',
        );
        assertProblem(
          await given.server.api.get(path(), { token: tokens.noRoutes }),
          403,
          'route_not_allowed',
        );
      });

      test('security: each required scope missing → 403 missing_scope; others are not required', async () => {
        for (const scope of SCOPES) {
          const r = await given.server.api.get(path(), { token: tokens[`without:${scope}`] });
          if (route.scopes.includes(scope)) assertProblem(r, 403, 'missing_scope');
          else assert.equal(r.status, 200, `${scope} is not required by ${route.id}: ${r.text}`);
        }
      });

      test('error: any query key the route does not take → 400 unsupported_filter naming the key as sent', async () => {
        for (const key of ['owners', 'patient_id', 'Limit', 'date_of_service', 'record_kind']) {
          assertProblem(
            await given.server.api.get(`${path()}?${key}=1`, { token: given.world.token }),
            400,
            'unsupported_filter',
            key,
          );
        }
        if (Object.keys(route.query.properties).length === 0) {
          assertProblem(
            await given.server.api.get(`${path()}?limit=1`, { token: given.world.token }),
            400,
            'unsupported_filter',
            'limit',
          );
        }
      });

      test('error: several unsupported keys → field is the first one sent, decoded, whatever its shape', async () => {
        for (const [query, first] of [
          ['zzz=1&5=2', 'zzz'],
          ['Sort_Order=asc&a=1', 'Sort_Order'],
          ['page%20size=2&x=1', 'page size'],
          [`${'k'.repeat(60)}=1`, 'k'.repeat(60)],
        ] as const) {
          const r = await given.server.api.get(`${path()}?${query}`, { token: given.world.token });
          assertProblem(r, 400, 'unsupported_filter', first);
        }
      });

      test('ordering: authentication before query errors, scopes before query errors', async () => {
        assertProblem(
          await given.server.api.get(`${path()}?owners=1&limit=0`, { token: generateToken('live') }),
          401,
          'invalid_key',
        );
        assertProblem(await given.server.api.get(`${path()}?owners=1&limit=0`), 401, 'missing_bearer');
        const lacking = tokens[`without:${route.scopes[0]}`]!;
        assertProblem(
          await given.server.api.get(`${path()}?limit=0&owners=1`, { token: lacking }),
          403,
          'missing_scope',
        );
        assertProblem(
          await given.server.api.get(`${path()}?owners=1`, { token: tokens.notAllowlisted }),
          403,
          'organization_not_allowlisted',
        );
      });

      test('ordering: unsupported_filter before resource lookup (unknown encounter)', async () => {
        if (route.id === 'listEncounters') return;
        const unknown = pathFor(route, given.world, { encounter: 'enc_doesnotexist' });
        assertProblem(
          await given.server.api.get(`${unknown}?x=1`, { token: given.world.token }),
          400,
          'unsupported_filter',
          'x',
        );
        assertProblem(
          await given.server.api.get(unknown, { token: given.world.token }),
          404,
          'encounter_not_found',
        );
      });

      test('HEAD answers like GET without a body; other methods → 405 with Allow', async () => {
        const head = await given.server.api.get(path(), { token: given.world.token, method: 'HEAD' });
        assert.equal(head.status, 200);
        assert.equal(head.text, '');
        const headDenied = await given.server.api.get(path(), { method: 'HEAD' });
        assert.equal(headDenied.status, 401);
        for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
          const r = await given.server.api.get(path(), { token: given.world.token, method });
          assertProblem(r, 405, 'method_not_allowed');
          assert.equal(r.headers.get('allow'), 'GET, HEAD');
        }
      });
    });
  }
});

forEachStore('deployment switches', (kind) => {
  let server: TestServer;
  let keysOff: TestServer;
  let sandbox: TestServer;
  let world: World;
  let testToken: string;
  before(async () => {
    server = await startTestServer(kind);
    world = await buildWorld(server.fixtures, server.putObject);
    testToken = (await server.fixtures.key(world.orgA, { environment: 'test' })).token;
    keysOff = await startTestServer(kind, {
      database: server.database,
      env: { EDS_API_KEYS_ENABLED: 'false' },
    });
    sandbox = await startTestServer(kind, {
      database: server.database,
      env: { EDS_DEPLOYMENT_MODE: 'sandbox' },
    });
  });
  after(async () => {
    await keysOff.close();
    await sandbox.close();
    await server.close();
  });

  test('error: API keys off for the deployment → 401 api_keys_disabled on every route, even for a test key', async () => {
    for (const route of ROUTE_LIST) {
      assertProblem(
        await keysOff.api.get(pathFor(route, world), { token: world.token }),
        401,
        'api_keys_disabled',
      );
      assertProblem(
        await keysOff.api.get(pathFor(route, world), { token: testToken }),
        401,
        'api_keys_disabled',
      );
      assertProblem(await keysOff.api.get(pathFor(route, world)), 401, 'missing_bearer');
    }
  });

  test('happy: a sandbox deployment accepts eds_test_ keys (and live keys)', async () => {
    for (const route of ROUTE_LIST) {
      assert.equal((await sandbox.api.get(pathFor(route, world), { token: testToken })).status, 200);
      assert.equal((await sandbox.api.get(pathFor(route, world), { token: world.token })).status, 200);
    }
  });
});

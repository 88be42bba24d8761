import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { getApiKey } from '../../src/store/apiKeys.js';
import { getSubscription } from '../../src/store/webhookSubscriptions.js';
import { recordTranscriptsReady } from '../../src/webhooks/events.js';
import { openSigningSecret, signingCiphertextAt } from '../../src/webhooks/signingSecret.js';
import {
  activateSubscription,
  changeEndpoint,
  createSubscription,
  describeSubscription,
  revokeReadiness,
  rotateSigningSecret,
  setCorrelationStatus,
} from '../../src/webhooks/subscriptions.js';
import { forEachStore } from '../support/stores.js';
import { createHarness, type Harness } from './support/harness.js';
import { CONTRACT_BODY_KEYS } from './support/verifier.js';

const URL_A = 'http://127.0.0.1:9/hooks';

forEachStore('webhook subscriptions and the outbox', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind);
  });
  after(async () => {
    await h.close();
  });

  test('a new subscription is disabled, at revision 1, correlation blocked; the secret is printed once', async () => {
    const created = await createSubscription(h.services, { organizationId: h.org, url: URL_A });
    assert.equal(created.enabled, false);
    assert.equal(created.revision, 1);
    assert.equal(created.correlation_status, 'not_confirmed_runtime_blocked');
    assert.match(created.signing_secret, /^whsec_[0-9A-Za-z]{43}$/);
    assert.match(created.subscription_id, /^whe_[0-9A-Za-z]{22}$/);
    const row = await getSubscription(h.services.store.db, created.subscription_id);
    assert.ok(row);
    assert.ok(!row.secret_ciphertext.includes(created.signing_secret.slice(6)), 'stored encrypted');
    const view = await describeSubscription(h.services, created.subscription_id);
    assert.ok(!JSON.stringify(view).includes(created.signing_secret.slice(6)), 'never shown again');
    assert.equal(view.delivering, false);
    assert.equal(view.activation, null);
  });

  test('unknown organization, non-https URL (when http is not allowed) and URLs with credentials are refused', async () => {
    await assert.rejects(
      createSubscription(h.services, { organizationId: 'org_nope', url: URL_A }),
      /does not exist/,
    );
    const strict = h.withEnv({ EDS_WEBHOOK_ALLOW_HTTP: 'false' });
    await assert.rejects(createSubscription(strict, { organizationId: h.org, url: URL_A }), /https/);
    await assert.rejects(
      createSubscription(h.services, { organizationId: h.org, url: 'https://u:p@example.test/' }),
      /user name or password/,
    );
  });

  test('activation mints a key with exactly the approved routes’ scopes (recordings:read only with audio)', async () => {
    const cases: [string[], string[]][] = [
      [['transcript'], ['encounters:read', 'documents:read']],
      [
        ['document', 'transcript'],
        ['encounters:read', 'documents:read'],
      ],
      [['encounter'], ['encounters:read', 'patients:read', 'documents:read']],
      [['audio'], ['encounters:read', 'documents:read', 'recordings:read']],
      [
        ['encounter', 'document', 'transcript', 'audio'],
        ['encounters:read', 'patients:read', 'documents:read', 'recordings:read'],
      ],
    ];
    for (const [routes, scopes] of cases) {
      const { subscription_id: id } = await createSubscription(h.services, {
        organizationId: h.org,
        url: URL_A,
      });
      const out = await activateSubscription(h.services, id, {
        routes,
        by: 'Dr. Approver',
        reference: 'CHG-42',
        forceReason: 'no receiver listens in this test',
      });
      assert.deepEqual(out.api_key.scopes, scopes, routes.join(','));
      assert.match(out.api_key.token, /^eds_live_/);
      assert.equal(out.subscription_id, id);
      assert.equal(out.revision, 1);
      const key = await getApiKey(h.services.store.db, out.api_key.key_id);
      assert.deepEqual(key?.scopes, scopes);
      assert.equal(key?.createdBy, `webhook:${id}`);
      assert.equal(key?.organizationId, h.org);
      const activation = await h.services.store.db
        .selectFrom('webhook_activations')
        .selectAll()
        .where('id', '=', out.activation_id)
        .executeTakeFirstOrThrow();
      assert.equal(activation.revision, 1);
      assert.equal(activation.activated_by, 'Dr. Approver');
      assert.equal(activation.reference, 'CHG-42');
      const readiness = JSON.parse(activation.readiness);
      assert.deepEqual(Object.keys(readiness).sort(), [
        'approved_routes',
        'audit',
        'confirmations',
        'correlation',
        'delivery',
        'forced',
        'network',
        'scopes',
        'signing',
      ]);
      assert.equal(readiness.forced.reason, 'no receiver listens in this test');
      assert.deepEqual(readiness.scopes, scopes);
      const view = await describeSubscription(h.services, id);
      assert.equal(view.enabled, true);
      assert.equal(view.active_revision, 1);
      assert.equal(view.activated, true);
    }
  });

  test('activation refuses unknown routes and missing provenance, changing nothing', async () => {
    const { subscription_id: id } = await createSubscription(h.services, {
      organizationId: h.org,
      url: URL_A,
    });
    await assert.rejects(
      activateSubscription(h.services, id, { routes: ['list'], by: 'A', reference: 'R' }),
      /unknown/,
    );
    await assert.rejects(
      activateSubscription(h.services, id, { routes: [], by: 'A', reference: 'R' }),
      /at least one/,
    );
    await assert.rejects(
      activateSubscription(h.services, id, { routes: ['audio'], by: ' ', reference: 'R' }),
      /--by/,
    );
    await assert.rejects(
      activateSubscription(h.services, id, { routes: ['audio'], by: 'A', reference: '' }),
      /--reference/,
    );
    const view = await describeSubscription(h.services, id);
    assert.equal(view.enabled, false);
    assert.equal(view.activation, null);
  });

  test('a change after activation is a new revision; re-activation revokes the earlier key', async () => {
    const { subscription_id: id } = await createSubscription(h.services, {
      organizationId: h.org,
      url: URL_A,
    });
    const first = await activateSubscription(h.services, id, {
      routes: ['transcript'],
      by: 'A',
      reference: 'R1',
      forceReason: 'no receiver listens in this test',
    });
    await setCorrelationStatus(h.services, id, 'confirmed');
    assert.equal((await describeSubscription(h.services, id)).delivering, true);
    const changed = await changeEndpoint(h.services, id, 'http://127.0.0.1:10/other');
    assert.equal(changed.revision, 2);
    assert.equal(changed.active_revision, 1);
    assert.equal(changed.activated, false);
    assert.equal(changed.delivering, false);
    const second = await activateSubscription(h.services, id, {
      routes: ['audio'],
      by: 'B',
      reference: 'R2',
      forceReason: 'no receiver listens in this test',
    });
    assert.equal(second.revision, 2);
    assert.equal(second.replaced_api_key_id, first.api_key.key_id);
    assert.equal((await getApiKey(h.services.store.db, first.api_key.key_id))?.state, 'revoked');
    assert.equal((await getApiKey(h.services.store.db, second.api_key.key_id))?.state, 'active');
    assert.equal((await describeSubscription(h.services, id)).delivering, true);
  });

  test('a secret rotation keeps the revision and activation; rotating again in the grace keeps the secret that signs now', async () => {
    const { id, secret: original } = await h.subscribe(URL_A);
    const signingNow = async () => {
      const row = (await getSubscription(h.services.store.db, id))!;
      return openSigningSecret(signingCiphertextAt(row, h.services.clock()), id, h.config.secrets);
    };
    const first = await rotateSigningSecret(h.services, id, { graceSeconds: 3600, by: 'A' });
    const view = await describeSubscription(h.services, id);
    assert.equal(view.revision, 1);
    assert.equal(view.activated, true);
    assert.equal(view.delivering, true);
    assert.equal(view.signing.signing_secret, 'previous');
    assert.equal(view.signing.previous_signs_until, first.new_secret_signs_from);
    assert.equal(await signingNow(), original);
    const second = await rotateSigningSecret(h.services, id, { graceSeconds: 3600, by: 'B' });
    assert.notEqual(second.signing_secret, first.signing_secret);
    assert.equal(await signingNow(), original, 'the secret receivers verify with keeps signing');
    await rotateSigningSecret(h.services, id, { graceSeconds: 0, by: 'C' }).then(async (third) => {
      assert.equal(await signingNow(), third.signing_secret);
    });
    const rotations = (await describeSubscription(h.services, id)).secret_rotations;
    // Listed by time; the three can fall in one millisecond, where no order is defined.
    assert.deepEqual(rotations.map((r) => [r.rotated_by, r.grace_seconds]).sort(), [
      ['A', 3600],
      ['B', 3600],
      ['C', 0],
    ]);
    const times = rotations.map((r) => Date.parse(r.rotated_at));
    assert.deepEqual(
      times,
      [...times].sort((x, y) => x - y),
    );
    await assert.rejects(rotateSigningSecret(h.services, id, { graceSeconds: -1, by: 'D' }), /--grace/);
    await assert.rejects(rotateSigningSecret(h.services, id, { graceSeconds: 10, by: ' ' }), /--by/);
    assert.equal((await describeSubscription(h.services, id)).secret_rotations.length, 3);
  });

  test('correlation is a gate of its own: it does not change the revision', async () => {
    const { subscription_id: id } = await createSubscription(h.services, {
      organizationId: h.org,
      url: URL_A,
    });
    const view = await setCorrelationStatus(h.services, id, 'confirmed');
    assert.equal(view.correlation_status, 'confirmed');
    assert.equal(view.revision, 1);
    const back = await setCorrelationStatus(h.services, id, 'not_confirmed_runtime_blocked');
    assert.equal(back.correlation_status, 'not_confirmed_runtime_blocked');
  });

  test('an event body has exactly the contract’s keys; none of the excluded data', async () => {
    const [eventId] = await h.finalize(1);
    const row = await h.services.store.db
      .selectFrom('webhook_events')
      .selectAll()
      .where('id', '=', eventId!)
      .executeTakeFirstOrThrow();
    const body = JSON.parse(row.body);
    assert.deepEqual(Object.keys(body), CONTRACT_BODY_KEYS);
    assert.deepEqual(Object.keys(body.resources), ['encounter_id', 'document_id']);
    assert.equal(body.type, 'recording.transcript_ready');
    assert.equal(body.api_version, '2026-05-01');
    assert.equal(body.id, eventId);
    assert.match(body.occurred_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.ok(!row.body.includes('Good morning'), 'no transcript turns');
    assert.ok(!row.body.includes('Silva'), 'no patient demographics');
  });

  test('deliveries are created in the event’s transaction only for subscriptions eligible then', async () => {
    const org = await h.fixtures.organization();
    const eligible = await h.subscribe(URL_A, { org });
    // Not eligible: not activated; correlation not confirmed; changed after activation; revoked;
    // and (eligible, but) another organization's.
    await h.subscribe(URL_A, { org, activate: false });
    await h.subscribe(URL_A, { org, correlation: 'not_confirmed_runtime_blocked' });
    const newRevision = await h.subscribe(URL_A, { org });
    await changeEndpoint(h.services, newRevision.id, 'http://127.0.0.1:11/changed');
    const revoked = await h.subscribe(URL_A, { org });
    await revokeReadiness(h.services, revoked.id);
    await h.subscribe(URL_A);

    const [eventId] = await h.finalize(1, org);
    const rows = await h.deliveries(eventId);
    assert.deepEqual(
      rows.map((r) => r.subscription_id),
      [eligible.id],
    );
    assert.equal(rows[0]?.status, 'pending');
    assert.match(rows[0]!.id, /^dlv_[0-9A-Za-z]{22}$/);

    // The deployment switch off: no deliveries, even for an eligible subscription.
    const off = h.withEnv({ EDS_WEBHOOKS_ENABLED: 'false' });
    const [quiet] = await h.finalize(1, org, off);
    assert.deepEqual(await h.deliveries(quiet), []);
  });

  test('a rolled-back finalization leaves neither event nor delivery', async () => {
    const org = await h.fixtures.organization();
    await h.subscribe(URL_A, { org });
    const encounterId = await h.fixtures.encounter(org);
    const documentId = await h.fixtures.document(org, encounterId, { schemaType: 'ambient_transcript' });
    let eventId = '';
    await assert.rejects(
      h.services.store.db.transaction().execute(async (tx) => {
        [eventId] = (await recordTranscriptsReady(
          tx,
          [{ organizationId: org, encounterId, documentId }],
          Date.now(),
          { config: h.config },
        )) as [string];
        throw new Error('import failed later');
      }),
      /import failed later/,
    );
    assert.deepEqual(await h.deliveries(eventId), []);
    const events = await h.services.store.db
      .selectFrom('webhook_events')
      .select('id')
      .where('id', '=', eventId)
      .execute();
    assert.deepEqual(events, []);
  });
});

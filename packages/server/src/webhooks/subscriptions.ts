/**
 * Subscriptions and their lifecycle: created disabled at revision 1 with correlation
 * `not_confirmed_runtime_blocked`; every change of endpoint or settings raises the revision (and
 * so stops delivery until the new revision is activated); activation records readiness,
 * provenance and the active revision, enables the subscription and mints the receiver's key in
 * one transaction; readiness revocation disables it and cancels its open deliveries.
 *
 * Correlation status is a runtime gate of its own, not an endpoint setting: changing it does not
 * raise the revision, and activation records the status it saw.
 */
import { FOLLOW_UP_ROUTES, type FollowUpRoute, scopesForFollowUpRoutes } from '../contract/routes.js';
import { WEBHOOK_EVENT_TYPE } from '../contract/webhook.js';
import type {
  CorrelationStatus,
  WebhookActivationRow,
  WebhookSecretRotationRow,
  WebhookSubscriptionRow,
} from '../database/schema.js';
import { mintApiKey } from '../domain/apiKeys.js';
import { OperatorError } from '../domain/errors.js';
import { newId, randomBase62 } from '../ids.js';
import { setApiKeyState } from '../store/apiKeys.js';
import { notifyAuthChanged } from '../store/authChanges.js';
import { getOrganization } from '../store/organizations.js';
import { cancelOpenDeliveries } from '../store/webhookDeliveries.js';
import {
  getActivation,
  getSubscription,
  insertActivation,
  insertSecretRotation,
  insertSubscription,
  isSubscriptionSending,
  listSecretRotations,
  listSubscriptions,
  markActivationRevoked,
  replaceSigningSecret,
  updateSubscription,
} from '../store/webhookSubscriptions.js';
import { toIso } from '../time.js';
import { endpointHostRefusal } from './egress.js';
import { endpointOrigin, endpointUrlProblem } from './endpointUrl.js';
import { confirmReadiness } from './readiness.js';
import { encryptSigningSecret, generateSigningSecret } from './secrets.js';
import { previousSecretSigns, signingCiphertextAt } from './signingSecret.js';
import { announceDeliveryWork } from './wake.js';

import type { WebhookAdmin } from './webhookAdmin.js';

export type { WebhookAdmin };

export const CORRELATION_STATUSES: readonly CorrelationStatus[] = [
  'confirmed',
  'not_confirmed_runtime_blocked',
];

/** The URL's form and what the egress policy can judge without DNS (IP literals, loopback names). */
function checkUrl(admin: WebhookAdmin, url: string): void {
  const problem = endpointUrlProblem(url, admin.config.webhooks);
  if (problem) throw new OperatorError(problem.message);
  const refusal = endpointHostRefusal(url, admin.config.webhooks.allowPrivateNetworks);
  if (refusal) throw new OperatorError(`the egress policy refuses the endpoint: its host is ${refusal}`);
}

async function requireSubscription(admin: WebhookAdmin, id: string): Promise<WebhookSubscriptionRow> {
  const row = await getSubscription(admin.store.db, id);
  if (!row) throw new OperatorError(`webhook subscription ${id} does not exist`);
  return row;
}

export async function createSubscription(
  admin: WebhookAdmin,
  input: { organizationId: string; url: string },
) {
  checkUrl(admin, input.url);
  const db = admin.store.db;
  if (!(await getOrganization(db, input.organizationId))) {
    throw new OperatorError(`organization ${input.organizationId} does not exist`);
  }
  const id = newId('whe');
  const secret = generateSigningSecret();
  const now = admin.clock();
  await insertSubscription(db, {
    id,
    organization_id: input.organizationId,
    url: input.url,
    secret_ciphertext: encryptSigningSecret(secret, id, admin.config.secrets.keyDigest),
    enabled: 0,
    revision: 1,
    active_revision: null,
    activation_id: null,
    correlation_status: 'not_confirmed_runtime_blocked',
    correlation_updated_at: now,
    created_at: now,
    updated_at: now,
  });
  return {
    subscription_id: id,
    signing_secret: secret,
    enabled: false,
    revision: 1,
    correlation_status: 'not_confirmed_runtime_blocked' as CorrelationStatus,
    organization_id: input.organizationId,
    url: input.url,
    event_types: [WEBHOOK_EVENT_TYPE],
  };
}

/** A change of endpoint: a new revision, which stops delivery until it is activated. */
export async function changeEndpoint(admin: WebhookAdmin, id: string, url: string) {
  checkUrl(admin, url);
  const db = admin.store.db;
  await db.transaction().execute(async (tx) => {
    const row = await getSubscription(tx, id);
    if (!row) throw new OperatorError(`webhook subscription ${id} does not exist`);
    if (row.url === url) return;
    await updateSubscription(tx, id, { url, revision: row.revision + 1, updated_at: admin.clock() });
  });
  return describeSubscription(admin, id);
}

/** Default grace of `eds webhook rotate-secret` (decisions.md, Rotation). */
export const DEFAULT_SECRET_GRACE_SECONDS = 86_400;

export interface RotateSecretInput {
  graceSeconds: number;
  /** Who rotated it, recorded with the subscription's provenance. */
  by: string;
}

/**
 * A new signing secret, printed this once. Not a new revision: delivery goes on without a new
 * activation, and events finalized meanwhile get deliveries as before. The secret signing now
 * keeps signing until the grace ends, then the new one (grace 0: at once, for a leaked secret).
 * Rotating again during a grace keeps the secret that signs at that moment as the former one.
 */
export async function rotateSigningSecret(admin: WebhookAdmin, id: string, input: RotateSecretInput) {
  if (!Number.isSafeInteger(input.graceSeconds) || input.graceSeconds < 0) {
    throw new OperatorError('--grace must be a whole number of seconds, 0 or more');
  }
  const by = input.by.trim();
  if (by === '') throw new OperatorError('--by must name who rotated the secret');
  const secret = generateSigningSecret();
  const db = admin.store.db;
  const now = admin.clock();
  const switchAt = now + input.graceSeconds * 1000;
  await db.transaction().execute(async (tx) => {
    const row = await getSubscription(tx, id);
    if (!row) throw new OperatorError(`webhook subscription ${id} does not exist`);
    const graced = input.graceSeconds > 0;
    const changed = await replaceSigningSecret(tx, row, {
      secret_ciphertext: encryptSigningSecret(secret, id, admin.config.secrets.keyDigest),
      previous_secret_ciphertext: graced ? signingCiphertextAt(row, now) : null,
      secret_switch_at: graced ? switchAt : null,
      updated_at: now,
    });
    if (!changed)
      throw new OperatorError(`webhook subscription ${id} changed meanwhile; nothing was rotated`);
    await insertSecretRotation(tx, {
      id: `whr_${randomBase62(22)}`,
      subscription_id: id,
      rotated_by: by,
      rotated_at: now,
      grace_seconds: input.graceSeconds,
      switch_at: switchAt,
    });
  });
  return {
    subscription_id: id,
    signing_secret: secret,
    rotated_by: by,
    rotated_at: toIso(now),
    new_secret_signs_from: toIso(switchAt),
  };
}

export async function setCorrelationStatus(admin: WebhookAdmin, id: string, status: CorrelationStatus) {
  if (!CORRELATION_STATUSES.includes(status)) {
    throw new OperatorError(`correlation status must be one of ${CORRELATION_STATUSES.join(', ')}`);
  }
  await admin.store.db.transaction().execute(async (tx) => {
    const row = await getSubscription(tx, id);
    if (!row) throw new OperatorError(`webhook subscription ${id} does not exist`);
    if (row.correlation_status === status) return;
    const now = admin.clock();
    await updateSubscription(tx, id, {
      correlation_status: status,
      correlation_updated_at: now,
      updated_at: now,
    });
    // Deliveries left pending while the gate was shut can go now.
    if (status === 'confirmed') await announceDeliveryWork(tx);
  });
  return describeSubscription(admin, id);
}

export interface ActivationInput {
  routes: readonly string[];
  by: string;
  reference: string;
  /** Activate although a confirmation failed; the reason is recorded with the provenance. */
  forceReason?: string | undefined;
}

export function parseFollowUpRoutes(names: readonly string[]): FollowUpRoute[] {
  const known = Object.keys(FOLLOW_UP_ROUTES) as FollowUpRoute[];
  const unknown = names.filter((n) => !(known as string[]).includes(n));
  if (unknown.length > 0) {
    throw new OperatorError(`unknown follow-up route ${unknown.join(', ')}; routes are ${known.join(', ')}`);
  }
  if (names.length === 0) throw new OperatorError('--routes needs at least one follow-up route');
  return known.filter((k) => names.includes(k));
}

/**
 * Activation, in one transaction: the readiness checklist and provenance recorded against the
 * current revision, the subscription enabled at that revision, and the receiver's API key minted
 * with exactly the approved routes' scopes. A key minted by an earlier activation is revoked in
 * the same transaction, so the receiver holds one key with exactly the approved scopes.
 */
export async function activateSubscription(admin: WebhookAdmin, id: string, input: ActivationInput) {
  const routes = parseFollowUpRoutes(input.routes);
  const by = input.by.trim();
  const reference = input.reference.trim();
  if (by === '') throw new OperatorError('--by must name who approved the activation');
  if (reference === '') throw new OperatorError('--reference must point to the approval record');
  const forceReason = input.forceReason?.trim();
  if (forceReason === '') throw new OperatorError('--reason must say why the activation is forced');
  const scopes = scopesForFollowUpRoutes(routes);
  const { config } = admin;

  // The confirmations reach out to the network: checked before the transaction, for the revision
  // read here; the transaction refuses if the subscription changed meanwhile.
  const checked = await requireSubscription(admin, id);
  checkUrl(admin, checked.url);
  const confirmations = await confirmReadiness(admin, checked, routes);
  const failed = confirmations.filter((c) => !c.passed && c.blocksActivation);
  if (failed.length > 0 && forceReason === undefined) {
    throw new OperatorError(
      `activation refused: ${failed.map((c) => `${c.name}: ${c.reason}`).join('; ')} (\`eds webhook check ${id}\` shows every confirmation; --force --reason TEXT activates anyway)`,
    );
  }

  return admin.store.db.transaction().execute(async (tx) => {
    const sub = await getSubscription(tx, id);
    if (!sub) throw new OperatorError(`webhook subscription ${id} does not exist`);
    if (sub.revision !== checked.revision || sub.url !== checked.url) {
      throw new OperatorError(
        `webhook subscription ${id} changed while it was checked; nothing was activated`,
      );
    }
    const now = admin.clock();
    const previous = sub.activation_id ? await getActivation(tx, sub.activation_id) : undefined;
    const { key, token } = await mintApiKey(
      tx,
      admin.digestKey,
      { organizationId: sub.organization_id, scopes, createdBy: `webhook:${sub.id}` },
      now,
    );
    const url = new URL(sub.url);
    const readiness = {
      approved_routes: routes.map((r) => ({ name: r, path: FOLLOW_UP_ROUTES[r].path })),
      scopes,
      signing: {
        scheme: 'v1',
        algorithm: 'HMAC-SHA256',
        secret_configured: true,
        header_prefix: config.webhooks.headerPrefix,
      },
      correlation: { status: sub.correlation_status },
      network: {
        origin: endpointOrigin(sub.url),
        scheme: url.protocol.slice(0, -1),
        https_required: !config.webhooks.allowHttp,
        private_networks_allowed: config.webhooks.allowPrivateNetworks,
        address_checked_at_connect: true,
      },
      delivery: {
        deployment_switch_on: config.webhooks.enabled,
        retry_schedule_seconds: config.webhooks.retryScheduleSeconds,
        jitter_ratio: config.webhooks.jitterRatio,
        attempt_timeout_ms: config.webhooks.attemptTimeoutMs,
        redirects_followed: false,
      },
      audit: { attempts_recorded: true, api_requests_audited: true },
      confirmations: confirmations.map(({ name, passed, reason }) => ({ name, passed, reason })),
      forced: failed.length > 0 ? { reason: forceReason, failed: failed.map((c) => c.name) } : null,
    };
    const activationId = `wha_${randomBase62(22)}`;
    await insertActivation(tx, {
      id: activationId,
      subscription_id: sub.id,
      revision: sub.revision,
      approved_routes: JSON.stringify(routes),
      scopes: JSON.stringify(scopes),
      readiness: JSON.stringify(readiness),
      activated_by: by,
      reference,
      activated_at: now,
      api_key_id: key.id,
      revoked_at: null,
    });
    await updateSubscription(tx, sub.id, {
      enabled: 1,
      active_revision: sub.revision,
      activation_id: activationId,
      updated_at: now,
    });
    let replacedKeyId: string | null = null;
    if (previous && previous.api_key_id !== key.id) {
      await setApiKeyState(tx, previous.api_key_id, 'revoked', now);
      await notifyAuthChanged(tx);
      replacedKeyId = previous.api_key_id;
    }
    await announceDeliveryWork(tx);
    return {
      subscription_id: sub.id,
      revision: sub.revision,
      api_key: { key_id: key.id, token, scopes: key.scopes },
      activation_id: activationId,
      approved_routes: routes,
      activated_by: by,
      activated_at: toIso(now),
      reference,
      correlation_status: sub.correlation_status,
      replaced_api_key_id: replacedKeyId,
      delivering: config.webhooks.enabled && sub.correlation_status === 'confirmed',
      confirmations: confirmations.map(({ name, passed, reason }) => ({ name, passed, reason })),
      forced_reason: failed.length > 0 ? (forceReason ?? null) : null,
    };
  });
}

/** `eds webhook check`: the confirmations for the current revision, sending nothing. */
export async function checkSubscription(admin: WebhookAdmin, id: string) {
  const sub = await requireSubscription(admin, id);
  const confirmations = await confirmReadiness(admin, sub);
  return {
    subscription_id: sub.id,
    revision: sub.revision,
    passed: confirmations.every((c) => c.passed),
    confirmations: confirmations.map(({ name, passed, reason }) => ({ name, passed, reason })),
  };
}

/**
 * Readiness revocation: the subscription is disabled and every open delivery (pending, sending
 * under a lease, sending with an expired lease) is cancelled. An attempt already in flight can
 * still reach the receiver, but its result cannot reopen the delivery: completions are fenced on
 * the lease token and on status `sending`.
 */
export async function revokeReadiness(admin: WebhookAdmin, id: string) {
  return admin.store.db.transaction().execute(async (tx) => {
    const sub = await getSubscription(tx, id);
    if (!sub) throw new OperatorError(`webhook subscription ${id} does not exist`);
    const now = admin.clock();
    await updateSubscription(tx, id, { enabled: 0, updated_at: now });
    if (sub.activation_id) await markActivationRevoked(tx, sub.activation_id, now);
    const cancelled = await cancelOpenDeliveries(tx, id, now);
    const activation = sub.activation_id ? await getActivation(tx, sub.activation_id) : undefined;
    return { subscription_id: id, cancelled, enabled: false, api_key_id: activation?.api_key_id ?? null };
  });
}

function describeActivation(row: WebhookActivationRow) {
  return {
    activation_id: row.id,
    revision: row.revision,
    approved_routes: JSON.parse(row.approved_routes) as string[],
    scopes: JSON.parse(row.scopes) as string[],
    activated_by: row.activated_by,
    activated_at: toIso(row.activated_at),
    reference: row.reference,
    api_key_id: row.api_key_id,
    readiness_revoked_at: row.revoked_at === null ? null : toIso(row.revoked_at),
  };
}

/** The subscription as an operator sees it: never the secret or its ciphertext. */
export async function describeSubscription(admin: WebhookAdmin, id: string) {
  const row = await requireSubscription(admin, id);
  const activation = row.activation_id ? await getActivation(admin.store.db, row.activation_id) : undefined;
  const rotations = await listSecretRotations(admin.store.db, row.id);
  return { ...toView(admin, row, activation), secret_rotations: rotations.map(describeRotation) };
}

function describeRotation(row: WebhookSecretRotationRow) {
  return {
    rotated_by: row.rotated_by,
    rotated_at: toIso(row.rotated_at),
    grace_seconds: row.grace_seconds,
    new_secret_signs_from: toIso(row.switch_at),
  };
}

/** Which secret signs now and when that changes; never the secrets themselves. */
function describeSigning(row: WebhookSubscriptionRow, now: number) {
  const graced = previousSecretSigns(row, now);
  return {
    signing_secret: graced ? ('previous' as const) : ('current' as const),
    /** While the previous secret signs: when the current (newest) one takes over. */
    previous_signs_until: graced ? toIso(row.secret_switch_at as number) : null,
  };
}

function toView(
  admin: WebhookAdmin,
  row: WebhookSubscriptionRow,
  activation: WebhookActivationRow | undefined,
) {
  const activated = row.active_revision !== null && row.active_revision === row.revision;
  return {
    subscription_id: row.id,
    organization_id: row.organization_id,
    url: row.url,
    event_types: [WEBHOOK_EVENT_TYPE],
    enabled: row.enabled === 1,
    revision: row.revision,
    active_revision: row.active_revision,
    activated,
    correlation_status: row.correlation_status,
    correlation_updated_at: toIso(row.correlation_updated_at),
    /** Whether an event written now would be delivered (every gate, the deployment's included). */
    delivering: admin.config.webhooks.enabled && isSubscriptionSending(row),
    /** Since when every attempt to the receiver has failed (null after a success). */
    failing_since: row.failing_since === null ? null : toIso(row.failing_since),
    /** Paused for failing too long: its deliveries wait until `eds webhook resume`. */
    paused: row.paused_at === null ? null : { since: toIso(row.paused_at), reason: row.pause_reason ?? '' },
    signing: describeSigning(row, admin.clock()),
    activation: activation ? describeActivation(activation) : null,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export async function listSubscriptionViews(admin: WebhookAdmin, organizationId?: string) {
  const rows = await listSubscriptions(admin.store.db, organizationId);
  const views = [];
  for (const row of rows) {
    const activation = row.activation_id ? await getActivation(admin.store.db, row.activation_id) : undefined;
    views.push(toView(admin, row, activation));
  }
  return { subscriptions: views };
}

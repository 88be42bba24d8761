/**
 * The contract's activation confirmations, checked rather than asserted: approved routes,
 * least-privilege scopes, signing setup, receiver correlation, network reachability (DNS under
 * the egress policy, through the proxy when set, TLS with certificate verification) and audit
 * readiness. Nothing is sent to the receiver. `eds webhook check` prints them; activation runs
 * them and refuses on a failure unless forced with a recorded reason.
 */
import { FOLLOW_UP_ROUTES, type FollowUpRoute, scopesForFollowUpRoutes } from '../contract/routes.js';
import { migrationsCurrent } from '../database/migrate.js';
import type { WebhookSubscriptionRow } from '../database/schema.js';
import { getActivation } from '../store/webhookSubscriptions.js';
import { endpointHostRefusal } from './egress.js';
import { endpointUrlProblem } from './endpointUrl.js';
import { unreachableBecause } from './reachability.js';
import { openSigningSecret, signingCiphertextAt } from './signingSecret.js';
import type { WebhookAdmin } from './webhookAdmin.js';

export interface Confirmation {
  readonly name:
    | 'approved_routes'
    | 'least_privilege_scopes'
    | 'signing_setup'
    | 'receiver_correlation'
    | 'network_reachability'
    | 'audit_readiness';
  readonly passed: boolean;
  readonly reason: string;
  /**
   * Whether a failure refuses activation. Correlation does not: it is a runtime gate of its own,
   * often confirmed after activation, and delivery waits for it either way.
   */
  readonly blocksActivation: boolean;
}

/**
 * The confirmations for the subscription's current revision. `routes`: those an activation is
 * about to approve; without them, those of the activation at the current revision, if any.
 */
export async function confirmReadiness(
  admin: WebhookAdmin,
  sub: WebhookSubscriptionRow,
  routes?: readonly FollowUpRoute[],
): Promise<Confirmation[]> {
  const approved = routes ?? (await approvedRoutes(admin, sub));
  const scopes = approved ? scopesForFollowUpRoutes(approved) : undefined;
  return [
    approved
      ? confirmed('approved_routes', approved.map((r) => `${r} (${FOLLOW_UP_ROUTES[r].path})`).join(', '))
      : refused(
          'approved_routes',
          'the current revision has no approved routes: `eds webhook activate --routes …`',
        ),
    scopes
      ? confirmed('least_privilege_scopes', `the receiver's key holds exactly ${scopes.join(', ')}`)
      : refused('least_privilege_scopes', 'no approved routes, so no scopes to grant'),
    signingSetup(admin, sub),
    sub.correlation_status === 'confirmed'
      ? { name: 'receiver_correlation', passed: true, reason: 'confirmed', blocksActivation: false }
      : {
          name: 'receiver_correlation',
          passed: false,
          reason: `${sub.correlation_status}: delivery waits until \`eds webhook correlation ID confirmed\``,
          blocksActivation: false,
        },
    await networkReachability(admin, sub.url),
    (await migrationsCurrent(admin.store.db))
      ? confirmed(
          'audit_readiness',
          'every attempt and every follow-up API request is recorded (schema current)',
        )
      : refused('audit_readiness', 'the database schema is out of date: run `eds migrate`'),
  ];
}

function confirmed(name: Confirmation['name'], reason: string): Confirmation {
  return { name, passed: true, reason, blocksActivation: true };
}

function refused(name: Confirmation['name'], reason: string): Confirmation {
  return { name, passed: false, reason, blocksActivation: true };
}

async function approvedRoutes(
  admin: WebhookAdmin,
  sub: WebhookSubscriptionRow,
): Promise<FollowUpRoute[] | undefined> {
  if (sub.activation_id === null || sub.active_revision !== sub.revision) return undefined;
  const activation = await getActivation(admin.store.db, sub.activation_id);
  if (!activation || activation.revoked_at !== null) return undefined;
  return JSON.parse(activation.approved_routes) as FollowUpRoute[];
}

function signingSetup(admin: WebhookAdmin, sub: WebhookSubscriptionRow): Confirmation {
  try {
    openSigningSecret(signingCiphertextAt(sub, admin.clock()), sub.id, admin.config.secrets);
    return confirmed(
      'signing_setup',
      `v1 HMAC-SHA256, headers prefixed ${admin.config.webhooks.headerPrefix}`,
    );
  } catch {
    return refused(
      'signing_setup',
      'the signing secret cannot be decrypted with the configured EDS_KEY_DIGEST_SECRET; rotate it first',
    );
  }
}

async function networkReachability(admin: WebhookAdmin, url: string): Promise<Confirmation> {
  const settings = admin.config.webhooks;
  const problem = endpointUrlProblem(url, settings);
  if (problem) return refused('network_reachability', problem.message);
  const refusal = endpointHostRefusal(url, settings.allowPrivateNetworks);
  if (refusal) return refused('network_reachability', `the egress policy refuses the host: ${refusal}`);
  const because = await unreachableBecause(url, {
    allowPrivateNetworks: settings.allowPrivateNetworks,
    timeoutMs: settings.attemptTimeoutMs,
    proxyUrl: settings.proxyUrl,
  });
  const route = settings.proxyUrl === undefined ? 'directly' : 'through the forward proxy';
  if (because) return refused('network_reachability', `cannot reach the receiver ${route}: ${because}`);
  const tls = url.startsWith('https:') ? ', TLS certificate verified' : ', plain http (no TLS)';
  return confirmed('network_reachability', `reached ${route}${tls}`);
}

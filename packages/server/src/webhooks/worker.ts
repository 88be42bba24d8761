/**
 * The delivery worker (`eds worker`, `eds serve --worker`). It claims due deliveries under a
 * lease fenced by a random token, sends each as one signed attempt, and records the attempt and
 * its effect in one transaction, only while the claim still holds. A worker that dies leaves its
 * leases to expire; the deliveries are then claimed again (at least once). Many workers share the
 * work on PostgreSQL (SKIP LOCKED claims); SQLite runs one worker process.
 *
 * It wakes on new work (NOTIFY, SQLite's change counter, in-process), on its own next due time, and at the
 * latest every poll interval; bounded overall by `concurrency` and per receiver origin by
 * `perEndpointConcurrency`. Stopping releases what it has not started and waits (bounded) for
 * what is in flight.
 */
import { randomBytes } from 'node:crypto';
import { inTransaction } from '../database/connection.js';
import type { AttemptOutcome, WebhookSubscriptionRow } from '../database/schema.js';
import type { Services } from '../services.js';
import {
  type ClaimedDelivery,
  type CompletionInput,
  claimDueDeliveries,
  nextDueAt,
  releaseUnattempted,
  renewLeases,
} from '../store/webhookDeliveries.js';
import type { PausedEndpoint } from '../store/webhookEndpointHealth.js';
import { isSubscriptionSending } from '../store/webhookSubscriptions.js';
import { toIso } from '../time.js';
import type { ErrorClass } from './classify.js';
import { CompletionWriter } from './completions.js';
import { createEgressAgent } from './egress.js';
import { endpointOrigin, endpointUrlProblem } from './endpointUrl.js';
import { KeyedLimiter } from './limiter.js';
import { honorsRetryAfter, nextRetryDelayMs, parseRetryAfter } from './schedule.js';
import { type AttemptResult, sendAttempt } from './sender.js';
import { signedHeaders } from './signer.js';
import { openSigningSecret, reencryptUnderCurrentRoot, signingCiphertextAt } from './signingSecret.js';
import { SubscriptionCheck } from './subscriptionCheck.js';
import { announceDeliveryWork, onDeliveryWork, watchDeliveryWork } from './wake.js';

export interface DeliveryWorker {
  stop(): Promise<void>;
}

export interface WorkerOptions {
  /** Source of jitter; tests pin it. */
  random?: () => number;
}

/** Claims per statement; larger batches only hold leases longer without going faster. */
const CLAIM_BATCH = 64;
/** Cross-process wake-up check on SQLite (a counter read, not a query). */
const SQLITE_WATCH_MS = 50;

interface Held {
  readonly token: string;
  readonly controller: AbortController;
  /** When the claim runs out unless renewed, by this worker's own reckoning. */
  leaseUntil: number;
  /** Whether the HTTP attempt has started (then stopping waits for it, bounded). */
  sending: boolean;
  readonly done: Promise<void>;
}

export function startDeliveryWorker(services: Services, options: WorkerOptions = {}): DeliveryWorker {
  const { config, logger, clock, metrics } = services;
  const settings = config.webhooks;
  const db = services.store.db;
  const log = logger.child({ component: 'webhook-worker' });

  // The event is planned_not_generally_available: nothing is delivered unless switched on (the
  // process that starts the worker says so).
  if (!settings.enabled) return { stop: async () => {} };

  const random = options.random ?? Math.random;
  const agent = createEgressAgent({
    allowPrivateNetworks: settings.allowPrivateNetworks,
    connectTimeoutMs: settings.attemptTimeoutMs,
    connectionsPerOrigin: settings.perEndpointConcurrency,
    proxyUrl: settings.proxyUrl,
  });
  const endpoints = new KeyedLimiter(settings.perEndpointConcurrency);
  const held = new Map<string, Held>();
  const completions = new CompletionWriter(db, settings.pauseAfterMs, (paused: PausedEndpoint) => {
    metrics.webhookEndpointPauses.inc();
    log.error(
      {
        subscription_id: paused.subscriptionId,
        failing_since: toIso(paused.failingSince),
        reason: paused.reason,
      },
      'webhook endpoint paused: its deliveries wait until `eds webhook resume`',
    );
  });
  const subscriptions = new SubscriptionCheck(db);
  const refillAt = Math.max(1, Math.min(CLAIM_BATCH, Math.floor(settings.concurrency / 2)));

  let running = true;
  let pumping = false;
  let pumpAgain = false;
  let pumpQueued = false;
  /** The last claim filled its request: more work is probably due, claim again when slots free. */
  let backlog = false;
  let timer: NodeJS.Timeout | undefined;
  let timerAt = Number.POSITIVE_INFINITY;

  const requestPump = () => {
    if (!running || pumpQueued) return;
    pumpQueued = true;
    // Coalesces wake-ups of one turn (many completions, a NOTIFY burst) into one claim.
    setImmediate(() => {
      pumpQueued = false;
      void pump();
    });
  };

  const armTimer = (at: number) => {
    if (!running || at >= timerAt) return;
    if (timer) clearTimeout(timer);
    timerAt = at;
    timer = setTimeout(
      () => {
        timer = undefined;
        timerAt = Number.POSITIVE_INFINITY;
        requestPump();
      },
      Math.max(0, at - clock()),
    );
  };

  async function pump(): Promise<void> {
    if (!running) return;
    if (pumping) {
      pumpAgain = true;
      return;
    }
    pumping = true;
    try {
      do {
        pumpAgain = false;
        backlog = false;
        while (running && held.size < settings.concurrency) {
          const want = Math.min(settings.concurrency - held.size, CLAIM_BATCH);
          const token = randomBytes(18).toString('base64url');
          const claimedAt = clock();
          const batch = await claimDueDeliveries(db, {
            now: claimedAt,
            leaseMs: settings.leaseMs,
            token,
            limit: want,
          });
          const leaseUntil = claimedAt + settings.leaseMs;
          for (const delivery of batch) dispatch(delivery, token, leaseUntil);
          backlog = batch.length === want;
          if (!backlog) break;
        }
      } while (pumpAgain && running);
      // Nothing more claimable now: sleep until the next due time, at most one poll interval.
      const now = clock();
      let wakeAt = now + settings.pollIntervalMs;
      if (!backlog) {
        const due = await nextDueAt(db);
        if (due !== undefined) wakeAt = Math.min(wakeAt, Math.max(due, now + 5));
      }
      armTimer(wakeAt);
    } catch (error) {
      log.error({ err: errorSummary(error) }, 'claiming webhook deliveries failed; retrying');
      armTimer(clock() + settings.pollIntervalMs);
    } finally {
      pumping = false;
    }
  }

  function dispatch(delivery: ClaimedDelivery, token: string, leaseUntil: number): void {
    const controller = new AbortController();
    const entry: Held = {
      token,
      controller,
      leaseUntil,
      sending: false,
      done: Promise.resolve()
        .then(() => deliver(delivery, entry))
        .catch((error) => {
          // The lease expires and another claim retries; nothing is lost.
          log.error({ err: errorSummary(error), delivery_id: delivery.id }, 'webhook delivery step failed');
        })
        .finally(() => {
          held.delete(delivery.id);
          // With a backlog, claim again once a good share of the slots is free: one claim (one
          // commit) per freed slot would make claiming the bottleneck.
          const free = settings.concurrency - held.size;
          if (held.size === 0 || (backlog && free >= refillAt)) requestPump();
        }),
    };
    held.set(delivery.id, entry);
  }

  /**
   * A claim given back unattempted is work again: other workers are told, as of new work, so
   * that one taking over from a stopping worker need not wait for its next poll.
   */
  async function giveBack(id: string, token: string): Promise<void> {
    await inTransaction(db, async (tx) => {
      if (await releaseUnattempted(tx, id, token, clock())) await announceDeliveryWork(tx);
    });
  }

  async function deliver(delivery: ClaimedDelivery, entry: Held): Promise<void> {
    const origin = endpointOrigin(delivery.url);
    if (!(await endpoints.acquire(origin, entry.controller.signal))) {
      await giveBack(delivery.id, entry.token);
      return;
    }
    let attempt: { result: AttemptResult; startedAt: number } | undefined;
    try {
      attempt = await attemptUnderSlot(delivery, entry);
    } finally {
      // The per-endpoint slot covers the HTTP exchange only, not the bookkeeping after it.
      endpoints.release(origin);
    }
    if (!attempt) {
      await giveBack(delivery.id, entry.token);
      return;
    }
    const { result, startedAt } = attempt;
    const now = clock();
    const completion: CompletionInput = {
      deliveryId: delivery.id,
      token: entry.token,
      receiver: receiverVerdict(delivery.subscriptionId, result),
      now,
      next: nextState(result, delivery.roundAttempts, now),
      attempt: {
        attemptNumber: delivery.attemptNumber,
        startedAt,
        durationMs: result.durationMs,
        statusCode: result.statusCode,
        errorClass: result.errorClass,
      },
    };
    const outcome = await completions.complete(completion);
    record(delivery, origin, completion, outcome, now);
    // A retryable failure that ends the delivery: its round is exhausted, an operator must act.
    if (outcome === 'failed' && result.result === 'retryable') metrics.webhookDeliveriesExhausted.inc();
    if (completion.next.status === 'pending' && outcome === 'retry') armTimer(completion.next.dueAt);
  }

  /**
   * Checks the gates again and makes the attempt; undefined when no attempt was made (stopping,
   * or the subscription is no longer eligible: the claim is then given back and the delivery
   * waits, or stays cancelled, which the fence keeps).
   */
  async function attemptUnderSlot(
    delivery: ClaimedDelivery,
    entry: Held,
  ): Promise<{ result: AttemptResult; startedAt: number } | undefined> {
    if (!running || entry.controller.signal.aborted) return undefined;
    // The gates again, at send time: the claim may be a while old.
    const sub = await subscriptions.current(delivery.subscriptionId);
    if (!sub || !isSubscriptionSending(sub)) return undefined;
    const startedAt = clock();
    const urlProblem = endpointUrlProblem(sub.url, settings);
    if (urlProblem) return { result: localFailure(urlProblem.problem), startedAt };
    let secret: string;
    try {
      // The secret that signs at this attempt's own timestamp (a rotation's grace may end any time).
      secret = openSigningSecret(signingCiphertextAt(sub, startedAt), sub.id, config.secrets);
    } catch {
      log.error({ subscription_id: sub.id }, 'signing secret cannot be decrypted (digest secret changed?)');
      return { result: localFailure('secret_unavailable'), startedAt };
    }
    if (config.secrets.keyDigestPrevious !== undefined) await moveSecretsToCurrentRoot(sub);
    const headers = signedHeaders({
      prefix: settings.headerPrefix,
      secret,
      eventId: delivery.eventId,
      deliveryId: delivery.id,
      apiVersion: delivery.apiVersion,
      body: delivery.body,
      now: startedAt,
    });
    if (entry.controller.signal.aborted) return undefined;
    entry.sending = true;
    const result = await sendAttempt(agent, {
      url: sub.url,
      headers,
      body: delivery.body,
      timeoutMs: settings.attemptTimeoutMs,
      abort: entry.controller.signal,
    });
    return { result, startedAt };
  }

  /** During a digest-secret rotation: best effort, tried again on the next attempt if it fails. */
  async function moveSecretsToCurrentRoot(sub: WebhookSubscriptionRow): Promise<void> {
    try {
      if (await reencryptUnderCurrentRoot(db, sub, config.secrets)) {
        log.info({ subscription_id: sub.id }, 'signing secret re-encrypted under the current digest secret');
      }
    } catch {
      log.warn({ subscription_id: sub.id }, 'could not re-encrypt the signing secret; will try again');
    }
  }

  function nextState(result: AttemptResult, roundAttempts: number, now: number): CompletionInput['next'] {
    if (result.result === 'success') return { status: 'succeeded', outcome: 'succeeded' };
    if (result.result === 'terminal') return { status: 'failed', outcome: 'failed' };
    // Cut short by our own shutdown: the receiver is not at fault, so try again straight away.
    if (result.errorClass === 'worker_shutdown') return { status: 'pending', outcome: 'retry', dueAt: now };
    const retryAfter =
      result.statusCode !== null && honorsRetryAfter(result.statusCode)
        ? parseRetryAfter(result.retryAfter, now)
        : undefined;
    const delay = nextRetryDelayMs(settings, roundAttempts, retryAfter, random);
    if (delay === undefined) return { status: 'failed', outcome: 'failed' };
    return { status: 'pending', outcome: 'retry', dueAt: now + Math.round(delay) };
  }

  function record(
    delivery: ClaimedDelivery,
    origin: string,
    completion: CompletionInput,
    outcome: AttemptOutcome,
    now: number,
  ): void {
    metrics.webhookAttempts.inc({ outcome });
    if (outcome === 'succeeded') {
      metrics.webhookDeliveryLatency.observe(Math.max(0, now - delivery.eventCreatedAt) / 1000);
    }
    const a = completion.attempt;
    const fields = {
      delivery_id: delivery.id,
      event_id: delivery.eventId,
      subscription_id: delivery.subscriptionId,
      origin,
      attempt: a.attemptNumber,
      status_code: a.statusCode,
      error: a.errorClass,
      outcome,
      duration_ms: Math.round(a.durationMs),
    };
    if (outcome === 'succeeded') log.info(fields, 'webhook delivered');
    else log.warn(fields, 'webhook attempt did not succeed');
  }

  /**
   * The heartbeat: keeps the leases of held deliveries alive, so that leases can be short and a
   * dead worker's claims are taken over within seconds. An attempt whose claim this worker no
   * longer holds, or could not renew in time (the store unreachable), is cut short before the
   * lease runs out: another worker may claim it then, and two live attempts of one delivery must
   * never overlap.
   */
  const renewEveryMs = Math.max(250, Math.floor(settings.leaseMs / 3));
  const renewal = setInterval(() => {
    void (async () => {
      const byToken = new Map<string, string[]>();
      for (const [id, entry] of held) byToken.set(entry.token, [...(byToken.get(entry.token) ?? []), id]);
      for (const [token, ids] of byToken) {
        const renewedAt = clock();
        try {
          const kept = new Set(await renewLeases(db, ids, token, renewedAt, settings.leaseMs));
          for (const id of ids) {
            const entry = held.get(id);
            if (!entry) continue;
            if (kept.has(id)) entry.leaseUntil = renewedAt + settings.leaseMs;
            else entry.controller.abort('lease_lost' as ErrorClass);
          }
        } catch (error) {
          log.warn({ err: errorSummary(error) }, 'renewing webhook delivery leases failed');
        }
      }
      // Would run out before the next heartbeat: stop now rather than outlive the claim.
      const cutoff = clock() + renewEveryMs;
      for (const entry of held.values()) {
        if (entry.leaseUntil <= cutoff) entry.controller.abort('lease_lost' as ErrorClass);
      }
    })();
  }, renewEveryMs);
  renewal.unref();

  const unsubscribe = onDeliveryWork(requestPump);
  const watch = watchDeliveryWork(
    services.store,
    config.database.dialect === 'postgres' ? config.database.url : undefined,
    requestPump,
    SQLITE_WATCH_MS,
  );
  requestPump();

  return {
    async stop() {
      if (!running) return;
      running = false;
      if (timer) clearTimeout(timer);
      clearInterval(renewal);
      unsubscribe();
      await watch.stop();
      // A claim running now dispatches into `held` (and releases at once, as we are stopping).
      while (pumping) await new Promise((r) => setTimeout(r, 5));
      // Not yet sending: give the claim back now. Sending: let it finish, within bounds.
      for (const entry of held.values()) if (!entry.sending) entry.controller.abort('worker_shutdown');
      const grace = Math.min(config.http.shutdownGraceMs, settings.attemptTimeoutMs);
      const all = Promise.all([...held.values()].map((e) => e.done));
      const timedOut = await Promise.race([
        all.then(() => false),
        new Promise<boolean>((r) => setTimeout(() => r(true), grace).unref()),
      ]);
      if (timedOut) for (const entry of held.values()) entry.controller.abort('worker_shutdown');
      await Promise.all([...held.values()].map((e) => e.done));
      await completions.idle();
      await agent.close().catch(() => {});
    },
  };
}

/** Failures that say nothing about the receiver: ours, or the proxy's alone. */
const NOT_THE_RECEIVER = new Set<ErrorClass>([
  'worker_shutdown',
  'lease_lost',
  'secret_unavailable',
  'proxy_unreachable',
]);

function receiverVerdict(subscriptionId: string, result: AttemptResult): CompletionInput['receiver'] {
  if (result.result === 'success') return { subscriptionId, verdict: 'ok', cause: 'success' };
  if (result.errorClass !== null && NOT_THE_RECEIVER.has(result.errorClass)) return undefined;
  const cause = result.statusCode !== null ? `HTTP ${result.statusCode}` : (result.errorClass ?? 'unknown');
  return { subscriptionId, verdict: 'failed', cause };
}

function localFailure(errorClass: ErrorClass): AttemptResult {
  const terminal = errorClass === 'insecure_url' || errorClass === 'invalid_url';
  return {
    result: terminal ? 'terminal' : 'retryable',
    statusCode: null,
    errorClass,
    retryAfter: undefined,
    durationMs: 0,
  };
}

/** An error for a log line: its name and code, not its message (which can carry URLs). */
function errorSummary(error: unknown): { name: string; code?: string } {
  const e = error as { name?: unknown; code?: unknown };
  return {
    name: typeof e?.name === 'string' ? e.name : 'Error',
    ...(typeof e?.code === 'string' ? { code: e.code } : {}),
  };
}

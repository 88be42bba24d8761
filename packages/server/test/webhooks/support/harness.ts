/**
 * A webhook test world: a fresh database of the given kind, services built from a real
 * configuration (small retry schedule, short timeouts), an organization, and helpers to create
 * subscriptions through the operator functions and to finalize transcripts the way the importer
 * does (event and deliveries in the finalization's transaction).
 */
import { type Config, loadConfig } from '../../../src/config.js';
import type { CorrelationStatus, DeliveryStatus, WebhookDeliveryRow } from '../../../src/database/schema.js';
import { createServices, type ServiceOverrides, type Services } from '../../../src/services.js';
import { recordTranscriptsReady, type TranscriptReady } from '../../../src/webhooks/events.js';
import {
  activateSubscription,
  createSubscription,
  setCorrelationStatus,
} from '../../../src/webhooks/subscriptions.js';
import { FixtureBuilder, TEST_DIGEST_SECRET, TEST_MEDIA_SECRET } from '../../support/fixtures.js';
import { createTestStore, type StoreKind, type TestDatabase } from '../../support/stores.js';

export const FAST_WEBHOOK_ENV: Record<string, string> = {
  EDS_WEBHOOKS_ENABLED: 'true',
  EDS_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  EDS_WEBHOOK_ALLOW_HTTP: 'true',
  EDS_WEBHOOK_RETRY_SCHEDULE: '0.05,0.1,0.1',
  EDS_WEBHOOK_JITTER: '0',
  // Generous: a loaded test machine must not turn slow answers into retries, nor a late lease
  // renewal into lease_lost. Tests of an expiring lease set their own.
  EDS_WEBHOOK_TIMEOUT_MS: '3000',
  EDS_WEBHOOK_LEASE_MS: '15000',
  EDS_WEBHOOK_POLL_MS: '200',
  EDS_SHUTDOWN_GRACE_MS: '1000',
};

export function webhookEnv(
  database: TestDatabase,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    EDS_DATABASE_URL: database.url,
    EDS_DATA_DIR: database.dir,
    EDS_KEY_DIGEST_SECRET: TEST_DIGEST_SECRET,
    EDS_MEDIA_SIGNING_SECRET: TEST_MEDIA_SECRET,
    EDS_LOG_LEVEL: 'silent',
    ...FAST_WEBHOOK_ENV,
    ...extra,
  };
}

export interface Harness {
  kind: StoreKind;
  database: TestDatabase;
  config: Config;
  services: Services;
  fixtures: FixtureBuilder;
  org: string;
  /** Services over the same database with other settings (closed with the harness). */
  withEnv(extra: Record<string, string>, overrides?: ServiceOverrides): Services;
  subscribe(url: string, options?: SubscribeOptions): Promise<{ id: string; secret: string }>;
  /** Finalizes `count` ambient transcripts of `org` in one transaction; returns the event ids. */
  finalize(count?: number, org?: string, services?: Services): Promise<string[]>;
  deliveries(eventId?: string): Promise<WebhookDeliveryRow[]>;
  /** Waits until every delivery of the event has this status; returns the first. */
  waitForStatus(eventId: string, status: DeliveryStatus, timeoutMs?: number): Promise<WebhookDeliveryRow>;
  close(): Promise<void>;
}

export interface SubscribeOptions {
  activate?: boolean;
  correlation?: CorrelationStatus;
  routes?: string[];
  org?: string;
}

export async function createHarness(
  kind: StoreKind,
  extraEnv: Record<string, string> = {},
): Promise<Harness> {
  const store = await createTestStore(kind);
  const database = store.database;
  const config = loadConfig(webhookEnv(database, extraEnv), database.dir);
  const services = createServices(config, { store });
  const fixtures = new FixtureBuilder(store.db);
  const org = await fixtures.organization();
  const extra: Services[] = [];

  const harness: Harness = {
    kind,
    database,
    config,
    services,
    fixtures,
    org,
    withEnv(env, overrides) {
      const other = createServices(
        loadConfig(webhookEnv(database, { ...extraEnv, ...env }), database.dir),
        overrides,
      );
      extra.push(other);
      return other;
    },
    async subscribe(url, options = {}) {
      const created = await createSubscription(services, { organizationId: options.org ?? org, url });
      if (options.activate ?? true) {
        await activateSubscription(services, created.subscription_id, {
          routes: options.routes ?? ['encounter', 'document', 'transcript'],
          by: 'Test Approver',
          reference: 'CHG-0001',
          // Fixtures activate receivers that may not listen yet; the confirmations are tested on their own.
          forceReason: 'test fixture',
        });
      }
      if ((options.correlation ?? 'confirmed') === 'confirmed') {
        await setCorrelationStatus(services, created.subscription_id, 'confirmed');
      }
      return { id: created.subscription_id, secret: created.signing_secret };
    },
    async finalize(count = 1, forOrg = org, using = services) {
      const ready: TranscriptReady[] = [];
      for (let i = 0; i < count; i++) {
        const encounterId = await fixtures.encounter(forOrg);
        const documentId = await fixtures.document(forOrg, encounterId, { schemaType: 'ambient_transcript' });
        ready.push({ organizationId: forOrg, encounterId, documentId });
      }
      return using.store.db
        .transaction()
        .execute((tx) => recordTranscriptsReady(tx, ready, using.clock(), { config: using.config }));
    },
    async deliveries(eventId) {
      let q = services.store.db.selectFrom('webhook_deliveries').selectAll();
      if (eventId !== undefined) q = q.where('event_id', '=', eventId);
      return q.orderBy('created_at').orderBy('id').execute();
    },
    async waitForStatus(eventId, status, timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const rows = await harness.deliveries(eventId);
        if (rows.length > 0 && rows.every((r) => r.status === status)) return rows[0]!;
        if (Date.now() > until) {
          const seen = rows.map((r) => r.status).join(', ') || 'absent';
          throw new Error(`deliveries of ${eventId} are ${seen}, expected ${status}`);
        }
        await sleep(20);
      }
    },
    async close() {
      for (const s of extra) await s.close();
      await services.close();
    },
  };
  return harness;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export async function attemptsOf(services: Services, deliveryId: string) {
  return services.store.db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('delivery_id', '=', deliveryId)
    .orderBy('attempt_number')
    .execute();
}

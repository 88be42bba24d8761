/**
 * The long-lived parts of a process, built once from the configuration and handed to the HTTP
 * app, the CLI commands and the webhook worker alike.
 */
import { type DigestKeyProvider, digestSecretId, staticDigestKey } from './auth/digest.js';
import type { Config } from './config.js';
import { openStore, type Store } from './database/connection.js';
import { createLogger, type Logger } from './logger.js';
import { createMediaStorage } from './media/index.js';
import type { MediaStorage } from './media/storage.js';
import { createMetrics, type Metrics } from './metrics.js';
import { countKeysOffCurrentSecret } from './store/apiKeys.js';
import { countPausedEndpoints } from './store/webhookEndpointHealth.js';

export type Clock = () => number;

export interface Services {
  readonly config: Config;
  readonly store: Store;
  readonly media: MediaStorage;
  readonly digestKey: DigestKeyProvider;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly metrics: Metrics;
  close(): Promise<void>;
}

export interface ServiceOverrides {
  store?: Store;
  media?: MediaStorage;
  logger?: Logger;
  clock?: Clock;
  digestKey?: DigestKeyProvider;
}

export function createServices(config: Config, overrides: ServiceOverrides = {}): Services {
  const store = overrides.store ?? openStore(config.database);
  const clock = overrides.clock ?? Date.now;
  const media = overrides.media ?? createMediaStorage(config, clock);
  const digestKey =
    overrides.digestKey ?? staticDigestKey(config.secrets.keyDigest, config.secrets.keyDigestPrevious);
  const metrics = createMetrics({ gcPauses: config.gcPauseMetrics });
  metrics.sources.keysOffCurrentDigestSecret = () =>
    countKeysOffCurrentSecret(store.db, digestSecretId(digestKey.current()), clock());
  metrics.sources.pausedWebhookEndpoints = () => countPausedEndpoints(store.db);
  return {
    config,
    store,
    media,
    digestKey,
    logger: overrides.logger ?? createLogger(config.logLevel),
    clock,
    metrics,
    async close() {
      metrics.close();
      await media.close?.();
      await store.close();
    },
  };
}

/**
 * A real API server on loopback, on a fresh database of the given kind, with captured logs.
 * Every response fetched through `api.get` is checked against the served OpenAPI document.
 */
import { Readable, Writable } from 'node:stream';
import { type Config, loadConfig } from '../../src/config.js';
import { openStore } from '../../src/database/connection.js';
import { startServer } from '../../src/http/server.js';
import { createLogger } from '../../src/logger.js';
import { createServices, type Services } from '../../src/services.js';
import { upgradeStore } from '../../src/upgradeStore.js';
import { type ApiClient, createApiClient } from './apiClient.js';
import { FixtureBuilder, TEST_DIGEST_SECRET, TEST_MEDIA_SECRET } from './fixtures.js';
import { createTestDatabase, type StoreKind, type TestDatabase } from './stores.js';

export interface TestServer {
  url: string;
  /** The embedded media host (local storage) and the admin port (when EDS_ADMIN_PORT is set). */
  mediaUrl: string | undefined;
  adminUrl: string | undefined;
  config: Config;
  services: Services;
  database: TestDatabase;
  fixtures: FixtureBuilder;
  api: ApiClient;
  /** Stores an object in the server's media storage (for recordings). */
  putObject(key: string, bytes: Buffer): Promise<void>;
  /** Every log line the server wrote, as text. */
  logs: string[];
  /** Writes the folded refusals the server has queued (keyed requests are committed already). */
  flushAudit(): Promise<void>;
  close(): Promise<void>;
}

export interface TestServerOptions {
  env?: Record<string, string>;
  clock?: () => number;
  /** Share another server's database (not dropped by this server's close). */
  database?: TestDatabase;
  services?: Partial<Pick<Services, 'media' | 'digestKey'>>;
}

/**
 * Every test server checks its own logs on close: no token, digest, signed-link signature or
 * PHI its fixtures created may appear in any line. Run over the whole suite, this is the
 * "no leaks" property.
 */
export function assertNoSecretsIn(lines: readonly string[], secrets: readonly string[]): void {
  const text = lines.join('\n');
  for (const secret of secrets) {
    if (secret.length >= 8 && text.includes(secret)) {
      throw new Error(`a log line contains a secret or PHI (${secret.slice(0, 6)}…)`);
    }
  }
}

export function testEnv(database: TestDatabase, env: Record<string, string> = {}): Record<string, string> {
  return {
    EDS_DATABASE_URL: database.url,
    EDS_DATA_DIR: database.dir,
    EDS_KEY_DIGEST_SECRET: TEST_DIGEST_SECRET,
    EDS_MEDIA_SIGNING_SECRET: TEST_MEDIA_SECRET,
    EDS_PORT: '0',
    EDS_MEDIA_PORT: '0',
    EDS_LOG_LEVEL: 'info',
    EDS_DB_POOL_SIZE: '5',
    // Keyed limits on (every answer carries the RateLimit fields) but never reached by a test
    // that is not about them; one test address must not exhaust the unauthenticated budget.
    EDS_RATE_LIMIT_PER_KEY: '1000000',
    EDS_RATE_LIMIT_BURST: '10000000',
    EDS_RATE_LIMIT_UNAUTHENTICATED: '0',
    // Refusals sent at once (their holds use real time, the buckets the test's clock); the test
    // of the hold turns it on.
    EDS_RATE_LIMIT_HOLD_MS: '0',
    // A loaded test machine can hold a Redis answer past the 250 ms default, which would make a
    // shared bucket fall back to this process's own; tests about outages stop Redis instead.
    EDS_REDIS_COMMAND_TIMEOUT_MS: '30000',
    // A loaded test machine can stall a commit for seconds; a test that wants audit_unavailable
    // makes the store refuse, it does not wait for a timeout.
    EDS_AUDIT_COMMIT_TIMEOUT_MS: '60000',
    ...env,
  };
}

export async function startTestServer(kind: StoreKind, options: TestServerOptions = {}): Promise<TestServer> {
  const database = options.database ?? (await createTestDatabase(kind));
  const config = loadConfig(testEnv(database, options.env), database.dir);
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const store = openStore(config.database);
  await upgradeStore(store.db);
  const services = createServices(config, {
    store,
    logger: createLogger(config.logLevel, sink),
    ...(options.clock ? { clock: options.clock } : {}),
    ...options.services,
  });
  const server = await startServer(services);
  const fixtures = new FixtureBuilder(store.db);
  const api = createApiClient(server.url);
  return {
    url: server.url,
    mediaUrl: server.mediaUrl,
    adminUrl: server.adminUrl,
    config,
    services,
    database,
    fixtures,
    api,
    logs,
    flushAudit: () => server.flushAudit(),
    putObject: async (key, bytes) => {
      await services.media.put(key, Readable.from([bytes]), 'audio/wav');
    },
    async close() {
      await server.close();
      await services.close();
      assertNoSecretsIn(logs, [...fixtures.secrets, ...api.linkSecrets]);
      if (!options.database) await database.drop();
    },
  };
}

/**
 * The OpenAPI document as the service serves it: a throwaway service on a scratch SQLite database
 * in `dir`, on a loopback port of the system's choosing, asked over HTTP.
 */
import { join } from 'node:path';
import { loadConfig } from '../src/config.js';
import { openStore } from '../src/database/connection.js';
import { migrateToLatest } from '../src/database/migrate.js';
import { startServer } from '../src/http/server.js';
import { createServices } from '../src/services.js';

export async function fetchServedOpenApi(dir: string, env: Record<string, string> = {}): Promise<unknown> {
  const config = loadConfig(
    {
      EDS_DATABASE_URL: join(dir, 'eds.sqlite'),
      EDS_DATA_DIR: dir,
      EDS_HOST: '127.0.0.1',
      EDS_PORT: '0',
      EDS_MEDIA_PORT: '0',
      EDS_LOG_LEVEL: 'silent',
      ...env,
    },
    dir,
  );
  const store = openStore(config.database);
  await migrateToLatest(store.db);
  const services = createServices(config, { store });
  const server = await startServer(services);
  try {
    const answer = await fetch(`${server.url}/openapi/v1/openapi.json`);
    if (answer.status !== 200) throw new Error(`the OpenAPI document answered ${answer.status}`);
    return await answer.json();
  } finally {
    await server.close();
    await services.close();
  }
}

/** Liveness and readiness for orchestrators: unauthenticated, no data. */

import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { migrationsCurrent } from '../database/migrate.js';
import type { Services } from '../services.js';

export function registerHealth(app: FastifyInstance, services: Services): void {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const checks = { store: false, digest_secret: false, migrations: false };
    try {
      await sql`SELECT 1`.execute(services.store.db);
      checks.store = true;
      checks.migrations = await migrationsCurrent(services.store.db);
    } catch {
      // reported as not ready below
    }
    try {
      checks.digest_secret = services.digestKey.current().length > 0;
    } catch {
      checks.digest_secret = false;
    }
    const ready = Object.values(checks).every(Boolean);
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks });
  });
}

/**
 * Runs the service's listeners on the shared services: the API, the embedded media host (local
 * storage), and the admin port (when configured). Shutdown is graceful: stop accepting, finish
 * in-flight requests, flush the audit queue and last-used times, then close the store.
 */
import { startMediaHost } from '../media/mediaHost.js';
import type { Services } from '../services.js';
import { type AdminServer, startAdminServer } from './adminServer.js';
import { createApiContext } from './apiContext.js';
import { buildApp } from './app.js';
import { connectionLimitFor } from './connectionLimit.js';

export interface RunningServer {
  url: string;
  mediaUrl: string | undefined;
  adminUrl: string | undefined;
  /** Writes the folded refusals queued so far (keyed requests are already committed). */
  flushAudit(): Promise<void>;
  close(): Promise<void>;
}

export async function startServer(services: Services): Promise<RunningServer> {
  const { config } = services;
  const context = createApiContext(services);
  // One bound for the process, over every port it listens on (decisions.md, Hardening).
  const connections = connectionLimitFor(services);
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;
  let media: Awaited<ReturnType<typeof startMediaHost>> | undefined;
  let admin: AdminServer | undefined;
  try {
    await context.ready();
    app = await buildApp(context, connections);
    await app.listen({ host: config.host, port: config.port });
    if (services.media.driver === 'local') media = await startMediaHost(services, connections);
    if (config.adminPort !== undefined) admin = await startAdminServer(services, connections);
  } catch (error) {
    // A port already taken must end `eds serve` with its message, not leave the process held
    // open by what was started before it (the audit writer thread, a listener).
    await Promise.allSettled([app?.close(), media?.close(), admin?.close()]);
    await context.close();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`,
    mediaUrl: media?.url,
    adminUrl: admin?.url,
    flushAudit: () => context.audit.flush(),
    close: () => {
      closing ??= (async () => {
        // Graceful within a deadline: in-flight requests get EDS_SHUTDOWN_GRACE_MS, then any
        // connection still open (a stuck or malicious client) is cut so shutdown cannot hang.
        const deadline = setTimeout(() => app.server.closeAllConnections(), config.http.shutdownGraceMs);
        try {
          await Promise.all([app.close(), media?.close()]);
        } finally {
          clearTimeout(deadline);
        }
        await context.close();
        await admin?.close();
      })();
      return closing;
    },
  };
}

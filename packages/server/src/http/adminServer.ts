/**
 * The admin port: Prometheus metrics only, on its own listener so it is never exposed with the
 * API. Not started unless EDS_ADMIN_PORT is set.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from '../metrics.js';

export interface AdminServer {
  url: string;
  close(): Promise<void>;
}

export async function startAdminServer(metrics: Metrics, host: string, port: number): Promise<AdminServer> {
  const server = createServer(async (req, res) => {
    if (req.method === 'GET' && (req.url === '/metrics' || req.url?.startsWith('/metrics?'))) {
      const body = await metrics.registry.metrics();
      res.writeHead(200, { 'Content-Type': metrics.registry.contentType, 'Cache-Control': 'no-store' });
      res.end(body);
      return;
    }
    res.writeHead(404, { 'Content-Type': 'text/plain' });
    res.end('not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const { port: actual } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${actual}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

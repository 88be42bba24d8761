/**
 * The admin port: Prometheus metrics only, on its own listener so it is never exposed with the
 * API. Not started unless EDS_ADMIN_PORT is set. Anything but `GET|HEAD /metrics` is refused
 * with problem+json, like every other answer of the service.
 */
import type { AddressInfo } from 'node:net';
import type { Services } from '../services.js';
import type { ConnectionLimit } from './connectionLimit.js';
import { answerWithProblem, createListener } from './listener.js';
import { listenerProblem } from './problem.js';

export interface AdminServer {
  url: string;
  close(): Promise<void>;
}

export async function startAdminServer(
  services: Pick<Services, 'config' | 'metrics'>,
  connections: ConnectionLimit,
): Promise<AdminServer> {
  const { config, metrics } = services;
  const { host } = config;
  const server = createListener(
    { port: 'admin', http: config.http, connections, answerClientErrors: true },
    (req, res) => {
      const path = (req.url ?? '/').split('?', 1)[0];
      if (path !== '/metrics') {
        answerWithProblem(
          res,
          listenerProblem(404, 'Route not found', 'The admin port serves /metrics only.'),
        );
      } else if (req.method !== 'GET' && req.method !== 'HEAD') {
        const allow = { Allow: 'GET, HEAD' };
        answerWithProblem(
          res,
          listenerProblem(405, 'Method not allowed', 'Only GET and HEAD are supported.', allow),
        );
      } else {
        metrics.registry.metrics().then(
          (body) => {
            res.writeHead(200, { 'Content-Type': metrics.registry.contentType, 'Cache-Control': 'no-store' });
            res.end(req.method === 'HEAD' ? undefined : body);
          },
          () => res.destroy(),
        );
      }
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.adminPort ?? 0, host, () => resolve());
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

/** A real node:http server on 127.0.0.1 that a test scripts, recording what it receives. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
}

export interface Loopback {
  url: string;
  requests: Recorded[];
  server: Server;
  close(): Promise<void>;
}

export async function startLoopback(
  handler: (req: IncomingMessage, res: ServerResponse, index: number) => void | Promise<void>,
): Promise<Loopback> {
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    const index = requests.length;
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    void Promise.resolve(handler(req, res, index)).catch((error) => {
      res.statusCode = 599;
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  res.writeHead(status, {
    'content-type': status >= 400 ? 'application/problem+json' : 'application/json',
    ...headers,
  });
  res.end(JSON.stringify(body));
}

export function problem(
  res: ServerResponse,
  status: number,
  reasonCode: string,
  headers: Record<string, string> = {},
) {
  json(
    res,
    status,
    {
      type: 'about:blank',
      title: reasonCode,
      status,
      detail: `Failure ${reasonCode}.`,
      reason_code: reasonCode,
      request_id: `req_${reasonCode}`,
    },
    { 'x-request-id': `req_${reasonCode}`, ...headers },
  );
}

/** A port nothing listens on: bind, read the port, close. */
export async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

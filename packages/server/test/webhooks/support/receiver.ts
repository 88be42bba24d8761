/**
 * A real webhook receiver on loopback (node:http). It reads the raw body, verifies it with the
 * contract's steps, records every request, and answers what the test's responder says (a status,
 * headers, a delay, or a hang that ends only when the client gives up).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Verification, verifyDelivery } from './verifier.js';

export interface Received {
  at: number;
  headers: IncomingMessage['headers'];
  method: string;
  path: string;
  rawBody: Buffer;
  verification: Verification;
  /** Which of the receiver's secrets verified it (index), or -1. */
  signedWith: number;
  deliveryId: string | undefined;
  /** Requests for the same delivery id in flight when this one arrived (excluding itself). */
  concurrentSameDelivery: number;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  delayMs?: number;
  /** Never answer (the client's timeout ends it). */
  hang?: boolean;
}

export type Responder = (request: Received, index: number) => Reply;

export interface TestReceiver {
  url: string;
  port: number;
  received: Received[];
  setResponder(responder: Responder): void;
  /** Resolves once `count` requests have arrived (or rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** The receiver's secret(s): during a rotation it accepts any of a list, like the SDK. */
export async function startReceiver(
  secret: () => string | readonly string[],
  /** `now`: the receiver's clock for the timestamp tolerance (the sender's, when a test moves it). */
  options: { host?: string; path?: string; prefix?: string; port?: number; now?: () => number } = {},
): Promise<TestReceiver> {
  const received: Received[] = [];
  const inFlight = new Map<string, number>();
  let responder: Responder = () => ({ status: 204 });
  const waiters: { count: number; resolve: () => void }[] = [];

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      const secrets = typeof secret() === 'string' ? [secret() as string] : [...secret()];
      let verification: Verification = { ok: false, reason: 'no_secret' };
      let signedWith = -1;
      for (const [index, candidate] of secrets.entries()) {
        verification = verifyDelivery(rawBody, req.headers, candidate, {
          prefix: options.prefix,
          nowMs: options.now?.(),
        });
        if (verification.ok) {
          signedWith = index;
          break;
        }
      }
      const header = req.headers[`${(options.prefix ?? 'Eds-').toLowerCase()}delivery-id`];
      const deliveryId = Array.isArray(header) ? header[0] : header;
      const concurrent = deliveryId ? (inFlight.get(deliveryId) ?? 0) : 0;
      if (deliveryId) inFlight.set(deliveryId, concurrent + 1);
      const entry: Received = {
        at: Date.now(),
        headers: req.headers,
        method: req.method ?? '',
        path: req.url ?? '',
        rawBody,
        verification,
        signedWith,
        deliveryId,
        concurrentSameDelivery: concurrent,
      };
      received.push(entry);
      for (const w of [...waiters]) {
        if (received.length >= w.count) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      }
      const reply: Reply = verification.ok ? responder(entry, received.length - 1) : { status: 401 };
      const finish = () => {
        if (deliveryId) inFlight.set(deliveryId, (inFlight.get(deliveryId) ?? 1) - 1);
      };
      if (reply.hang) {
        res.on('close', finish);
        return;
      }
      setTimeout(() => {
        finish();
        res.writeHead(reply.status, reply.headers ?? {});
        res.end();
      }, reply.delayMs ?? 0);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) =>
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve),
  );
  const port = (server.address() as AddressInfo).port;
  const host = options.host ?? '127.0.0.1';
  return {
    url: `http://${host}:${port}${options.path ?? '/hooks/eds'}`,
    port,
    received,
    setResponder(r) {
      responder = r;
    },
    waitFor(count, timeoutMs = 10_000) {
      if (received.length >= count) return Promise.resolve(received);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`receiver got ${received.length} of ${count} requests`)),
          timeoutMs,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve(received);
          },
        });
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

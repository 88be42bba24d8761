/**
 * The node:http server under each of the service's ports (API, media, admin), with what every
 * port must do before a handler sees a request:
 * - connections are bounded (connectionLimit.ts) and idle keep-alive ones closed after
 *   EDS_KEEP_ALIVE_TIMEOUT_MS; slow headers and bodies end at the request timeout;
 * - an absolute-form target (`GET https://user:pw@host/path`) is reduced to its path and query,
 *   so no URL, header or log field is ever built from the request line's authority;
 * - the answers Node would otherwise give itself are problem+json: a request it cannot parse, an
 *   HTTP/1.1 request without `Host` (400), and `CONNECT` (405 with `Allow: GET, HEAD`; Node would
 *   only have closed the connection).
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Config } from '../config.js';
import { createServer } from '../nodeHttp.js';
import type { ConnectionLimit, PortName } from './connectionLimit.js';
import { clientErrorHandler, type ListenerProblem, listenerProblem, rawResponse } from './problem.js';
import { originForm } from './rewriteUrl.js';

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface ListenerOptions {
  readonly port: PortName;
  readonly http: Config['http'];
  readonly connections: ConnectionLimit;
  /**
   * Whether this listener answers unreadable requests itself; Fastify registers its own
   * `clientError` handler (the same renderer) for the API.
   */
  readonly answerClientErrors: boolean;
}

const ONLY_GET_AND_HEAD = { Allow: 'GET, HEAD' } as const;

export function createListener(options: ListenerOptions, handler: RequestHandler): Server {
  const { http, connections, port } = options;
  // One function for every response of the server: a closure and a once() wrapper per response
  // cost a share of a cheap answer. Read through the request: by 'close' the response has
  // already let go of its socket, the request never does.
  function requestEnded(this: ServerResponse): void {
    connections.requestEnded(this.req.socket);
  }
  const server = createServer(
    {
      maxHeaderSize: http.maxHeaderBytes,
      requestTimeout: http.requestTimeoutMs,
      // Headers must arrive within the request timeout too (Node's default is 60 s).
      headersTimeout: Math.min(http.requestTimeoutMs, 60_000),
      // Node checks those timeouts only every connectionsCheckingInterval (30 s by default): a
      // client trickling headers would hold a socket that long. Check every second.
      connectionsCheckingInterval: 1000,
      // Node would answer a missing Host itself, with an empty body; it is answered below.
      requireHostHeader: false,
    },
    (req, res) => {
      const socket = req.socket;
      connections.requestStarted(socket);
      res.on('close', requestEnded);
      if (req.url !== undefined) req.url = originForm(req.url);
      if (lacksRequiredHost(req)) {
        answerWithProblem(
          res,
          listenerProblem(400, 'Bad request', 'Bad request: an HTTP/1.1 request needs a Host header.'),
        );
        return;
      }
      handler(req, res);
    },
  );
  server.keepAliveTimeout = http.keepAliveTimeoutMs;
  server.on('connection', (socket) => connections.admit(socket, port));
  server.on('connect', refuseConnect);
  if (options.answerClientErrors) server.on('clientError', clientErrorHandler);
  return server;
}

/** RFC 9112 §3.2: a server must answer 400 to an HTTP/1.1 request without a Host header. */
function lacksRequiredHost(req: IncomingMessage): boolean {
  return req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1;
}

/** A handler's own refusal below any router (the admin port): then the connection closes. */
export function answerWithProblem(res: ServerResponse, problem: ListenerProblem): void {
  res.writeHead(problem.status, problem.headers);
  res.end(problem.body);
}

/** `CONNECT` asks for a tunnel; no port of this service is a proxy. */
function refuseConnect(_req: IncomingMessage, socket: Duplex): void {
  const problem = listenerProblem(
    405,
    'Method not allowed',
    'Only GET and HEAD are supported.',
    ONLY_GET_AND_HEAD,
  );
  socket.on('error', () => socket.destroy());
  socket.end(rawResponse(problem));
}

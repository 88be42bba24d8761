/**
 * The one place errors become responses: RFC 9457 problem+json with the contract's reason code
 * (decisions.md, Errors), for the API and the media host alike. ApiErrors render as themselves;
 * Fastify's own errors, unknown paths, wrong methods, transport-level failures and unexpected
 * failures are mapped here so no response is ever in another shape or a bare 500.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { REASONS, type ReasonCode } from '../contract/reasons.js';
import type { ProblemBody } from '../contract/schemas.js';
import { ApiError, isSharedRefusal, RETRY_SHORTLY, sharedRefusal } from '../domain/errors.js';
import { newId } from '../ids.js';
import { STATUS_CODES } from '../nodeHttp.js';
import { API_HEADERS } from './plugins/requestContext.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** The answer to a path no route serves, wherever that is found out. */
export const NO_ROUTE = sharedRefusal('route_not_found', 'No route matches this path.');

/** The body of every problem answer: `message` repeats `detail` for clients of either name. */
export function problemBody(error: ApiError, requestId: string): ProblemBody {
  const code = error.reasonCode;
  return {
    type: `/docs/problems#${code}`,
    title: REASONS[code].title,
    status: error.status,
    detail: error.detail,
    reason_code: code,
    request_id: requestId,
    message: error.detail,
    field: error.field,
  };
}

/** A shared refusal's body, serialized once, before and after its request id. */
const SHARED_BODIES = new WeakMap<ApiError, readonly [string, string]>();
const ID_MARK = '\u0000request_id\u0000';
const ID_PLACE = JSON.stringify(ID_MARK);

/**
 * The problem body as JSON. Written by JSON.stringify, not by the route's problem schema:
 * problemBody builds exactly the schema's members in the schema's order, and the schema's
 * serializer, looked up per answer and escaping string by string, cost more. A shared refusal's
 * body differs between answers only in the request id, so the rest is serialized once.
 */
export function problemJson(error: ApiError, requestId: string): string {
  if (!isSharedRefusal(error)) return JSON.stringify(problemBody(error, requestId));
  let around = SHARED_BODIES.get(error);
  if (around === undefined) {
    const parts = JSON.stringify(problemBody(error, ID_MARK)).split(ID_PLACE);
    if (parts.length !== 2) throw new Error(`a shared refusal's body must hold its request id once`);
    around = [parts[0]!, parts[1]!];
    SHARED_BODIES.set(error, around);
  }
  return around[0] + JSON.stringify(requestId) + around[1];
}

export function sendProblem(reply: FastifyReply, error: ApiError): FastifyReply {
  reply.request.reasonCode = error.reasonCode;
  const { headers } = error;
  for (const name in headers) reply.header(name, headers[name]);
  return reply.code(error.status).type(PROBLEM_CONTENT_TYPE).send(problemJson(error, reply.request.id));
}

/** The same answer on a plain node:http response (the media host); HEAD gets no body. */
export function writeProblem(
  res: ServerResponse,
  error: ApiError,
  requestId: string,
  method: string | undefined,
): void {
  const body = problemJson(error, requestId);
  res.writeHead(error.status, {
    ...error.headers,
    'Content-Type': `${PROBLEM_CONTENT_TYPE}; charset=utf-8`,
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(method === 'HEAD' ? undefined : body);
}

/** Headers that describe the data; none may survive its replacement by a problem. */
const DATA_HEADERS = ['etag', 'last-modified', 'link', 'content-length', 'content-range'];

/**
 * In onSend, once a route has computed its answer: replaces it by the problem (status, headers,
 * body to return from the hook), for a failure found only after the route's work (the audit
 * store refusing the record). The answer's data is gone and so is its disclosure.
 */
export function replaceWithProblem(request: FastifyRequest, reply: FastifyReply, error: ApiError): string {
  request.reasonCode = error.reasonCode;
  request.disclosedPatientIds = undefined;
  for (const name of DATA_HEADERS) reply.removeHeader(name);
  const { headers } = error;
  for (const name in headers) reply.header(name, headers[name]);
  reply.code(error.status).type(PROBLEM_CONTENT_TYPE);
  return problemJson(error, request.id);
}

/** Maps anything thrown during a request to an ApiError. */
export function toApiError(error: unknown, request: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error;
  const fastifyError = error as Partial<FastifyError>;
  const status = fastifyError.statusCode ?? 500;
  if (status === 404) return NO_ROUTE;
  if (status === 405)
    return new ApiError('method_not_allowed', 'Only GET and HEAD are supported.', { Allow: 'GET, HEAD' });
  if (status >= 400 && status < 500) {
    // A request Fastify itself could not take (bad URL encoding, a body it cannot parse on a
    // method that has no route): it never reached a route.
    return new ApiError('route_not_found', 'The request could not be routed.');
  }
  // Anything else is the store or a dependency failing mid-request. A key that could not be
  // verified is digest_key_unavailable already (auth/verifyApiKey.ts), so this failure came
  // after verification, or on a route that needs no key: retryable, never a 500.
  request.log.error({ err: failureCause(error) }, 'request failed: answered service_unavailable');
  return new ApiError(
    'service_unavailable',
    'The service is temporarily unavailable; retry shortly.',
    RETRY_SHORTLY,
  );
}

/**
 * What the log keeps of an unexpected failure: its class, code and first words. Store and
 * driver messages name relations and connections, not request data, and are cut short in case.
 */
export function failureCause(error: unknown): { name?: string; code?: string; message?: string } {
  if (!(error instanceof Error)) return { name: typeof error };
  const code = (error as NodeJS.ErrnoException).code;
  return { name: error.name, ...(code ? { code: String(code) } : {}), message: error.message.slice(0, 200) };
}

/** Fastify errors raised before routing (e.g. FST_ERR_BAD_URL): same body, same headers. */
export function frameworkErrorHandler(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  for (const [name, value] of Object.entries(API_HEADERS)) reply.header(name, value);
  reply.header('X-Request-Id', request.id);
  sendProblem(reply, toApiError(error, request));
}

const CLIENT_ERROR_STATUS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request header fields too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request timeout'],
};

/**
 * Errors Node's HTTP parser raises before Fastify sees a request (oversized headers, malformed
 * requests, timeouts). The reply is written to the socket directly, still as problem+json; its
 * reason_code is route_not_found because the request never reached a route.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (!socket.writable || error.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const [status, title] = CLIENT_ERROR_STATUS[error.code ?? ''] ?? [400, 'Bad request'];
  socket.end(rawResponse(listenerProblem(status, title, `${title}: the request could not be read.`)));
}

export interface ListenerProblem {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * An answer the listener gives itself, below any route (a request it cannot read, one without
 * `Host`, `CONNECT`): the same problem body and headers, and the connection closed after it.
 * Without a route, a refusal of the request itself is `route_not_found` with its own status;
 * a method is `method_not_allowed`.
 */
export function listenerProblem(
  status: number,
  title: string,
  detail: string,
  headers: Readonly<Record<string, string>> = {},
): ListenerProblem {
  const requestId = newId('req');
  const code: ReasonCode = status === 405 ? 'method_not_allowed' : 'route_not_found';
  const body = JSON.stringify({ ...problemBody(new ApiError(code, detail), requestId), status, title });
  return {
    status,
    body,
    headers: {
      ...headers,
      'Content-Type': PROBLEM_CONTENT_TYPE,
      'Content-Length': String(Buffer.byteLength(body)),
      ...API_HEADERS,
      'X-Request-Id': requestId,
      Connection: 'close',
    },
  };
}

/** The whole HTTP/1.1 response, for a socket no ServerResponse owns. */
export function rawResponse(problem: ListenerProblem): string {
  const head = [
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? 'Error'}`,
    ...Object.entries(problem.headers).map(([name, value]) => `${name}: ${value}`),
  ];
  return `${head.join('\r\n')}\r\n\r\n${problem.body}`;
}

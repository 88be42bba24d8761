/**
 * Registers one contract route: its schema (which serializes the response and is its OpenAPI
 * entry), the authorization gate, query validation, and a thin handler that calls the domain.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type, { type TObject, type TSchema } from 'typebox';
import type { Caller } from '../../auth/verifyApiKey.js';
import { problemExample, SUCCESS_EXAMPLES } from '../../contract/examples.js';
import { REASONS, reasonsByStatusFor } from '../../contract/reasons.js';
import type { RouteDefinition } from '../../contract/routes.js';
import type { SchemaName } from '../../contract/schemas.js';
import type { RouteDeprecation } from '../../deprecations.js';
import { ApiError } from '../../domain/errors.js';
import type { QueryRules } from '../../domain/queryValidation.js';
import { StoredAnswer } from '../../domain/storedAnswer.js';
import type { ApiContext } from '../apiContext.js';
import { sendDeprecationHeaders } from '../deprecationHeaders.js';
import { authorizeRoute } from '../plugins/authorize.js';
import { validateQuery } from '../plugins/validateQuery.js';
import { failureCause, NO_ROUTE, PROBLEM_CONTENT_TYPE, sendProblem } from '../problem.js';
import {
  API_RESPONSE_HEADERS,
  DEPRECATION_HEADERS,
  RATE_LIMIT_HEADERS,
  RETRY_AFTER_HEADER,
  WWW_AUTHENTICATE_HEADER,
} from '../responseHeaders.js';
import { sendStoredAnswer } from '../storedAnswer.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The contract route's id, for logs, metrics and audit. */
    routeId?: string;
  }
}

export interface ApiRouteSpec<Params> {
  route: RouteDefinition;
  params?: TSchema;
  /** How the route's query schema (`route.query`) answers a bad value; none when it takes no keys. */
  queryRules?: QueryRules<any>;
  response: SchemaName & keyof typeof SUCCESS_EXAMPLES;
  /** Headers of the 200 beyond the rate-limit fields, for OpenAPI. */
  responseHeaders?: Record<string, unknown>;
  /** Routes answered from stored bytes: a strong ETag on 200, and 304 for If-None-Match. */
  conditional?: boolean;
  description: string;
  handle(input: {
    context: ApiContext;
    caller: Caller;
    params: Params;
    request: FastifyRequest;
    reply: FastifyReply;
  }): Promise<unknown>;
}

/** Headers an error status carries besides the rate-limit fields. */
const ERROR_HEADERS: Record<number, Record<string, unknown>> = {
  401: { ...RATE_LIMIT_HEADERS, ...WWW_AUTHENTICATE_HEADER },
  429: { ...RATE_LIMIT_HEADERS, ...RETRY_AFTER_HEADER },
  503: { ...RATE_LIMIT_HEADERS, ...RETRY_AFTER_HEADER },
};

/** Every answer's headers, whatever its status (its own come last, so a route's `Link` wins). */
const withCommonHeaders = (headers: Record<string, unknown>) => ({
  ...API_RESPONSE_HEADERS,
  ...DEPRECATION_HEADERS,
  ...headers,
});

/**
 * For each error status a route can answer with: the named problem schema, narrowed to that
 * route's codes for that status (the body is problem.ts's problemBody either way).
 */
function errorResponses(route: RouteDefinition) {
  const responses: Record<number, unknown> = {};
  for (const [status, codes] of reasonsByStatusFor(route.id)) {
    responses[status] = {
      description: codes.map((code) => `\`${code}\`: ${REASONS[code].title}`).join('; '),
      headers: withCommonHeaders(ERROR_HEADERS[status] ?? RATE_LIMIT_HEADERS),
      content: {
        [PROBLEM_CONTENT_TYPE]: {
          schema: {
            allOf: [{ $ref: 'Problem#' }, { type: 'object', properties: { reason_code: { enum: codes } } }],
          },
          examples: Object.fromEntries(
            codes.map((code) => [code, { summary: REASONS[code].title, value: problemExample(code) }]),
          ),
        },
      },
    };
  }
  return responses;
}

const CONDITIONAL_REQUEST_HEADERS = Type.Object({
  'if-none-match': Type.Optional(
    Type.String({
      description:
        'ETag(s) of a representation you hold. When one is current the answer is 304 Not Modified ' +
        'with no body, after the same authorization and checks as a 200.',
    }),
  ),
});

const ETAG_HEADER = {
  ETag: {
    type: 'string',
    description: 'Strong entity tag of this body; it changes whenever the body would change.',
  },
};

/** `type: 'null'`: @fastify/swagger documents it as a response without content. */
const NOT_MODIFIED = {
  type: 'null',
  description:
    'Not Modified: If-None-Match named the current ETag. No body; the same ETag, Cache-Control ' +
    'and X-Request-Id as a 200.',
  headers: withCommonHeaders({ ...RATE_LIMIT_HEADERS, ...ETAG_HEADER }),
};

interface ResponseDoc {
  description: string;
  headers?: Record<string, unknown>;
}

/**
 * HEAD answers as GET does, without the body: documented as its own operation whose responses
 * have the same headers and no content.
 */
function headOperation(schema: Record<string, unknown>, route: RouteDefinition) {
  const responses = schema.response as Record<string, ResponseDoc>;
  return {
    ...schema,
    operationId: `${route.id}Head`,
    summary: `${route.summary} (headers only)`,
    description: `The headers ${route.method} would answer with (status, ETag, rate-limit fields), without the body.`,
    response: Object.fromEntries(
      Object.entries(responses).map(([status, response]) => [
        status,
        { type: 'null', description: response.description, headers: response.headers },
      ]),
    ),
  };
}

function deprecationNote(deprecation: RouteDeprecation): string {
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  return (
    `\n\n**Deprecated** since ${day(deprecation.deprecatedAt)}; it stops answering after ` +
    `${day(deprecation.sunsetAt)}. Notice: ${deprecation.link}. Its answers carry \`Deprecation\`, ` +
    '`Sunset` and `Link rel="deprecation"`.'
  );
}

/** `/external/v1/encounters/` is not the encounter "" but no route at all. */
function rejectEmptyParams(request: FastifyRequest): void {
  const params = request.params as Record<string, string>;
  for (const name in params) {
    if (params[name] === '') throw NO_ROUTE;
  }
}

/**
 * The route's one onRequest hook: its id for logs, metrics and audit, the empty-parameter check
 * (only on paths that have parameters), then authorization. A refusal decided at once is answered
 * here, and the request goes no further; any other refusal reaches the error handler.
 */
function routeGate(route: RouteDefinition, context: ApiContext) {
  const authorize = authorizeRoute(route, context);
  const hasParams = route.path.includes(':');
  return function gate(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
    request.routeId = route.id;
    if (hasParams) rejectEmptyParams(request);
    const authorized = authorize(request, reply);
    if (authorized instanceof ApiError) sendProblem(reply, authorized);
    // A rejection always carries its refusal; one without any must still stop the request.
    else
      authorized.then(
        () => done(),
        (error) => done(error ?? new Error('authorization failed without a reason')),
      );
  };
}

/**
 * A route's failure after its gate: to the error handler while nothing is sent; logged (as the
 * error handler would) when the answer is already on its way; the connection dropped if even the
 * error cannot be sent, rather than a request left without an answer or a rejection unhandled.
 */
function answerFailure(request: FastifyRequest, reply: FastifyReply, error: unknown): void {
  if (reply.sent) {
    request.log.error({ err: failureCause(error) }, 'route failed after its answer was sent');
    return;
  }
  try {
    reply.send(error instanceof Error ? error : new Error('the route failed without a reason'));
  } catch (sendError) {
    request.log.error({ err: failureCause(sendError) }, 'route failure could not be answered');
    reply.raw.destroy();
  }
}

export function registerApiRoute<Params>(
  app: FastifyInstance,
  context: ApiContext,
  spec: ApiRouteSpec<Params>,
): void {
  const { route } = spec;
  const deprecation = context.services.config.deprecations[route.id];
  app.route({
    method: route.method,
    url: route.path,
    config: {
      routeId: route.id,
      swagger: { exposeHeadRoute: true },
      swaggerTransform: ({ schema, url, route: registered }) => ({
        url,
        schema:
          registered.method === 'HEAD' ? headOperation(schema as Record<string, unknown>, route) : schema,
      }),
    },
    schema: {
      operationId: route.id,
      summary: route.summary,
      description: `${spec.description}\n\nRequired scopes: ${route.scopes.map((s) => `\`${s}\``).join(', ')}. Route group: \`${route.group}\`.${deprecation ? deprecationNote(deprecation) : ''}`,
      ...(deprecation ? { deprecated: true } : {}),
      tags: [route.group],
      security: [{ bearerAuth: [] }],
      ...(spec.params ? { params: spec.params } : {}),
      ...(Object.keys(route.query.properties).length > 0 ? { querystring: route.query } : {}),
      ...(spec.conditional ? { headers: CONDITIONAL_REQUEST_HEADERS } : {}),
      response: {
        200: {
          description: 'OK',
          headers: withCommonHeaders({
            ...RATE_LIMIT_HEADERS,
            ...(spec.conditional ? ETAG_HEADER : {}),
            ...spec.responseHeaders,
          }),
          content: {
            'application/json': {
              schema: { $ref: `${spec.response}#` },
              example: SUCCESS_EXAMPLES[spec.response],
            },
          },
        },
        ...(spec.conditional ? { 304: NOT_MODIFIED } : {}),
        ...errorResponses(route),
      },
    },
    ...(deprecation ? { onSend: sendDeprecationHeaders(deprecation) } : {}),
    onRequest: routeGate(route, context),
    preValidation: validateQuery(route, spec.queryRules as QueryRules<TObject> | undefined),
    // Not an async handler: the answer is sent when the domain's promise settles. An async handler
    // that sent the reply would have to return it, and Fastify then waits for the response to end
    // (Reply#then) with a set of stream listeners per answer, for nothing.
    handler: (request, reply) => {
      spec
        .handle({
          context,
          caller: request.caller as Caller,
          params: request.params as Params,
          request,
          reply,
        })
        .then((answer) => {
          if (answer instanceof StoredAnswer) sendStoredAnswer(request, reply, answer);
          else reply.send(answer);
        })
        .catch((error: unknown) => answerFailure(request, reply, error));
    },
  });
}

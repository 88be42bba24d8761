/**
 * The Fastify instance: request context, the five contract routes, 404/405, OpenAPI, health, and
 * the single error mapping. Validation of requests is the contract's own (http/plugins), so
 * Fastify's schema validator is switched off; its serializer writes what a route returns from
 * the route's schema. Problems are written by problem.ts, the same on every path.
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { ROUTE_LIST } from '../contract/routes.js';
import { NAMED_SCHEMAS } from '../contract/schemas.js';
import { ApiError } from '../domain/errors.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import { METHODS } from '../nodeHttp.js';
import type { ApiContext } from './apiContext.js';
import type { ConnectionLimit } from './connectionLimit.js';
import { deferredChildLogger } from './deferredRequestLogger.js';
import { registerDocs } from './docsPage.js';
import { registerHealth } from './health.js';
import { createListener } from './listener.js';
import { registerOpenApi } from './openapi.js';
import { registerAuditBeforeAnswer } from './plugins/auditBeforeAnswer.js';
import { registerObservation } from './plugins/observe.js';
import { registerRequestContext } from './plugins/requestContext.js';
import { clientErrorHandler, frameworkErrorHandler, NO_ROUTE, sendProblem, toApiError } from './problem.js';
import { literalizeBadEscapes } from './rewriteUrl.js';
import { registerApiRoute } from './routes/apiRoute.js';
import { API_ROUTES } from './routes/index.js';

export async function buildApp(context: ApiContext, connections: ConnectionLimit): Promise<FastifyInstance> {
  const { config, logger } = context.services;
  const app = Fastify({
    loggerInstance: frameworkLogger(logger) as FastifyBaseLogger,
    // One line per request is written by plugins/observe.ts, without headers or query strings.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'req_id' }),
    genReqId: () => newId('req'),
    childLoggerFactory: deferredChildLogger,
    requestIdHeader: false,
    // request.ip (rate limits, logs) is the socket's address unless the peer is a named proxy.
    trustProxy: config.trustProxy.length > 0 ? [...config.trustProxy] : false,
    // Opaque IDs of any length up to the URL limit must reach the handler (then 404), not fail routing.
    routerOptions: { maxParamLength: config.http.maxHeaderBytes },
    // Timeouts, connection bounds, absolute-form targets, Host and CONNECT: listener.ts.
    serverFactory: (handler) =>
      createListener({ port: 'api', http: config.http, connections, answerClientErrors: false }, handler),
    forceCloseConnections: 'idle',
    return503OnClosing: false,
    rewriteUrl: (request) => literalizeBadEscapes(request.url ?? '/'),
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
  });

  // Every method Node can parse reaches the router, so a known path answers any of them 405.
  for (const method of METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method))
      app.addHttpMethod(method, { hasBody: true });
  }
  app.setValidatorCompiler(() => () => true);
  for (const [name, schema] of Object.entries(NAMED_SCHEMAS)) app.addSchema({ ...schema, $id: name });

  registerRequestContext(app);
  registerObservation(app, context);
  registerAuditBeforeAnswer(app, context);
  await registerOpenApi(app, config);
  registerHealth(app, context.services);
  await registerDocs(app);

  for (const spec of API_ROUTES) registerApiRoute(app, context, spec);
  registerMethodNotAllowed(app);

  app.setNotFoundHandler((_request, reply) => {
    sendProblem(reply, NO_ROUTE);
  });
  app.setErrorHandler((error, request, reply) => {
    sendProblem(reply, toApiError(error, request));
  });
  return app;
}

/** Known paths answer other methods with 405 and `Allow: GET, HEAD`, before any body is read. */
function registerMethodNotAllowed(app: FastifyInstance): void {
  const methods = app.supportedMethods.filter((m) => !['GET', 'HEAD', 'CONNECT'].includes(m));
  for (const route of ROUTE_LIST) {
    app.route({
      method: methods,
      url: route.path,
      schema: { hide: true },
      onRequest: async () => {
        throw new ApiError('method_not_allowed', 'This API is read-only: use GET or HEAD.', {
          Allow: 'GET, HEAD',
        });
      },
      handler: async () => undefined,
    });
  }
}

/**
 * Fastify's own logger. With request logging off, the one line Fastify writes at `info` is its
 * "Server listening at …", which the service's `api listening` line says along with the media and
 * admin URLs; at `info` (the default) Fastify's logger starts at `warn`, which keeps
 * `eds demo --serve`'s JSON the first line on standard output. Fastify's warnings and errors still
 * reach the log, and so does `request.log`, which the service writes to only at `error`. Asked for
 * `debug` or `trace`, Fastify logs everything, its listen line included.
 */
function frameworkLogger(logger: Logger): Logger {
  return logger.level === 'info' ? logger.child({}, { level: 'warn' }) : logger;
}

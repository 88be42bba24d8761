/**
 * After each response: one log line (path without query, never headers), metrics, and for
 * requests refused before a key was identified, or refused 429 with one, the folded audit record
 * (other keyed requests were committed before their answer, see auditBeforeAnswer.ts). Nothing
 * here holds a token, a signed link or PHI: IDs only.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { flatInfoLine, pathOnly } from '../../logger.js';
import type { ApiContext } from '../apiContext.js';
import { DOCS_PREFIX } from '../docsPage.js';
import { OPENAPI_PATH } from '../openapi.js';
import { auditedAfterAnswer, auditFieldsOf } from './auditRecord.js';

/** Routes outside the contract's five, by the path they are registered under. */
const SERVICE_ROUTES: Readonly<Record<string, string>> = {
  '/healthz': 'healthz',
  '/readyz': 'readyz',
  [OPENAPI_PATH]: 'openapi',
};

/**
 * The `route` of logs and metrics: the contract route's id, or the service route's name (every
 * page under /docs is `docs`); `unmatched` for a path no route serves, a 404 route_not_found
 * from a route's own pattern included, so real 404s are counted together and apart.
 */
export function routeLabel(request: FastifyRequest): string {
  if (request.reasonCode === 'route_not_found') return 'unmatched';
  if (request.routeId !== undefined) return request.routeId;
  const { config, url } = request.routeOptions;
  if (config?.routeId) return config.routeId;
  if (url === undefined) return 'unmatched';
  if (url === DOCS_PREFIX || url.startsWith(`${DOCS_PREFIX}/`)) return 'docs';
  return SERVICE_ROUTES[url] ?? 'unmatched';
}

export function registerObservation(app: FastifyInstance, context: ApiContext): void {
  const { metrics, clock, logger } = context.services;
  const requestLine = flatInfoLine(logger, 'request');
  // A callback hook: nothing here waits.
  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const routeId = routeLabel(request);
    const status = reply.statusCode;
    const durationMs = reply.elapsedTime;
    const reasonCode = request.reasonCode ?? null;
    metrics.httpDuration.observe(routeId, status, durationMs / 1000);
    metrics.responses.count(routeId, status, reasonCode ?? '');
    // The line the request's child logger would write (the request id first), written to the
    // service's logger's destination without building a child logger for every request. Its
    // fields are ids, numbers, a reason code and a path without its query. Checked here too, so
    // that at `warn` not even the fields are gathered.
    if (logger.isLevelEnabled('info')) {
      requestLine({
        req_id: request.id,
        method: request.method,
        route: routeId,
        path: pathOnly(request.url).slice(0, 256),
        status,
        reason_code: reasonCode,
        duration_ms: Math.round(durationMs * 100) / 100,
        organization_id: request.auditSubject?.organizationId ?? undefined,
        key_id: request.auditSubject?.keyId ?? undefined,
      });
    }
    if (request.auditSubject && auditedAfterAnswer(request)) {
      context.audit.push(auditFieldsOf(request, reply, clock()));
    }
    done();
  });
}

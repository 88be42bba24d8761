/**
 * After each response: one log line (path without query, never headers), metrics, and for
 * requests that got past bearer parsing one audit record. Nothing here holds a token, a signed
 * link or PHI: IDs only.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { pathOnly } from '../../logger.js';
import type { ApiContext } from '../apiContext.js';

const MAX_ID_LENGTH = 128;

function idParam(request: FastifyRequest, name: string): string | null {
  const value = (request.params as Record<string, string> | undefined)?.[name];
  return value === undefined ? null : value.slice(0, MAX_ID_LENGTH);
}

export function registerObservation(app: FastifyInstance, context: ApiContext): void {
  const { metrics, clock } = context.services;
  app.addHook('onResponse', async (request: FastifyRequest, reply: FastifyReply) => {
    const routeId = request.routeOptions.config?.routeId ?? 'unmatched';
    const status = reply.statusCode;
    const durationMs = reply.elapsedTime;
    const reasonCode = request.reasonCode ?? null;
    metrics.httpDuration.observe({ route: routeId, status }, durationMs / 1000);
    metrics.httpResponses.inc({ route: routeId, status, reason_code: reasonCode ?? '' });
    request.log.info(
      {
        method: request.method,
        route: routeId,
        path: pathOnly(request.url).slice(0, 256),
        status,
        reason_code: reasonCode,
        duration_ms: Math.round(durationMs * 100) / 100,
        organization_id: request.auditSubject?.organizationId ?? undefined,
        key_id: request.auditSubject?.keyId ?? undefined,
      },
      'request',
    );
    if (request.auditSubject) {
      context.audit.push({
        at: clock(),
        request_id: request.id,
        organization_id: request.auditSubject.organizationId,
        key_id: request.auditSubject.keyId,
        method: request.method,
        route: routeId,
        encounter_id: idParam(request, 'encounter_id'),
        document_id: idParam(request, 'document_id'),
        status,
        reason_code: reasonCode,
        duration_ms: Math.round(durationMs * 100) / 100,
      });
    }
  });
}

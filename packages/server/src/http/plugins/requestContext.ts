/**
 * Per-request context: the request id (generated, never taken from the client, so logs cannot
 * be forged) and the headers every API response carries (decisions.md, Responses).
 */
import type { FastifyInstance } from 'fastify';

export const API_HEADERS = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
} as const;

declare module 'fastify' {
  interface FastifyRequest {
    /** Set once a reason code decides the response; read by logging, metrics and audit. */
    reasonCode?: string;
    /**
     * The patients whose data this answer carries, set by the route handler from what it read:
     * for the list, the patient of every item on the page; for the other routes, the encounter's
     * patient. Stored with the request's audit record (disclosure accounting).
     */
    disclosedPatientIds?: readonly string[];
  }
}

export function registerRequestContext(app: FastifyInstance): void {
  app.decorateRequest('reasonCode', undefined);
  app.decorateRequest('disclosedPatientIds', undefined);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
    for (const [name, value] of Object.entries(API_HEADERS)) reply.header(name, value);
  });
}

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
     * The patients a successful answer disclosed (set by the route handlers: every item's patient
     * on a list page, the encounter's patient on routes 2-5); read by the audit.
     */
    disclosedPatientIds?: readonly string[];
  }
}

export function registerRequestContext(app: FastifyInstance): void {
  app.decorateRequest('reasonCode', undefined);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
    for (const [name, value] of Object.entries(API_HEADERS)) reply.header(name, value);
  });
}

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
    /**
     * The contract route's id, set by the route's own gate from what it was registered with, so
     * logs, metrics and audit need not rebuild Fastify's route options to find it.
     */
    routeId?: string;
  }
}

const CACHE_CONTROL = API_HEADERS['Cache-Control'];
const CONTENT_TYPE_OPTIONS = API_HEADERS['X-Content-Type-Options'];

export function registerRequestContext(app: FastifyInstance): void {
  app.decorateRequest('reasonCode', undefined);
  app.decorateRequest('disclosedPatientIds', undefined);
  app.decorateRequest('routeId', undefined);
  // A callback hook, not an async one: it never waits, and a promise per request is not free.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    reply.header('Cache-Control', CACHE_CONTROL);
    reply.header('X-Content-Type-Options', CONTENT_TYPE_OPTIONS);
    done();
  });
}

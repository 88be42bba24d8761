/**
 * A keyed request whose rate-limit decision Redis is still making may have done its route's work
 * meanwhile (rateLimit.ts, requestLimits.ts). Its answer waits here for the decision, in onSend,
 * before the audit hook and before a byte is written: when the key was refused, the 429 replaces
 * whatever the route answered (a 200, a 403 or a 404 alike), as decisions.md's check order puts
 * the limit before them, and the route's data never leaves.
 */
import type { FastifyInstance, onSendHookHandler } from 'fastify';
import { replaceWithProblem, toApiError } from '../problem.js';

export function registerLimitBeforeAnswer(app: FastifyInstance): void {
  // A callback hook: most requests have nothing pending, and pay no promise here for it.
  const waitForLimit: onSendHookHandler = (request, reply, payload, done) => {
    const pending = request.pendingLimit;
    if (pending === undefined) return done(null, payload);
    request.pendingLimit = undefined;
    pending.then(
      () => done(null, payload),
      (error: unknown) => done(null, replaceWithProblem(request, reply, toApiError(error, request))),
    );
  };
  app.addHook('onSend', waitForLimit);
}

/**
 * No answer to a keyed request leaves before its audit record is durable (decisions.md, Audit).
 * The record is built in onSend, once the status and payload are final and before a byte is
 * written, and the hook waits for the group commit that carries it. Whether a request waits is
 * decided by its key, not its status: a 200, a 304 and a refusal of a known key alike — except
 * its 429s, which disclose nothing and are folded after the answer like unidentified refusals
 * (a flooding key must not slow other keys' commits). If the audit store cannot take the record,
 * the payload is replaced by 503 audit_unavailable, so no data leaves unaudited.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RETRY_SHORTLY, sharedRefusal } from '../../domain/errors.js';
import type { ApiContext } from '../apiContext.js';
import { replaceWithProblem } from '../problem.js';
import { auditedAfterAnswer, auditRecordOf } from './auditRecord.js';

const AUDIT_UNAVAILABLE = sharedRefusal(
  'audit_unavailable',
  'The audit log cannot record this request right now, so nothing was sent; retry shortly.',
  RETRY_SHORTLY,
);

export function registerAuditBeforeAnswer(app: FastifyInstance, context: ApiContext): void {
  const { clock } = context.services;
  async function answerOnceDurable(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
    const record = auditRecordOf(request, reply, clock());
    try {
      await context.durableAudit.commit(record);
      return payload;
    } catch {
      return replaceWithProblem(request, reply, AUDIT_UNAVAILABLE);
    }
  }
  // Fastify waits for the promise when one is returned, else for `done`: an answer that waits
  // for nothing goes on at once, without a promise and a turn of its own.
  app.addHook(
    'onSend',
    (
      request: FastifyRequest,
      reply: FastifyReply,
      payload: unknown,
      done: (error: Error | null, payload?: unknown) => void,
    ) => {
      if (!request.auditSubject || auditedAfterAnswer(request)) return done(null, payload);
      return answerOnceDurable(request, reply, payload);
    },
  );
}

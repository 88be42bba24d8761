/**
 * Sends an answer assembled from stored bytes (routes 1-4): the bytes as they are (no
 * serializer), with their strong ETag, or 304 Not Modified when If-None-Match names the current
 * tag (decisions.md, "Conditional requests and paging links"). A 304 is reached only after the
 * same authorization and checks as a 200, carries the same headers but no body, and is audited
 * like one; the patients of the answer count as disclosed either way.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StoredAnswer } from '../domain/storedAnswer.js';
import { ifNoneMatchHits } from '../readModel/entityTags.js';

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export function sendStoredAnswer(request: FastifyRequest, reply: FastifyReply, answer: StoredAnswer) {
  request.disclosedPatientIds = answer.disclosedPatientIds;
  reply.header('ETag', answer.etag);
  if (ifNoneMatchHits(request.headers['if-none-match'], answer.etag)) {
    return reply.code(304).send();
  }
  return reply.header('Content-Type', JSON_CONTENT_TYPE).send(answer.body);
}

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

/**
 * String bodies at least this long are sent as bytes (a list page arrives as bytes already). A
 * keyed answer waits for its audit commit between here and the socket, and Fastify's onSend hooks
 * hold the payload meanwhile: a long document or transcript held as a string survives
 * young-generation collections, is copied by each and is promoted to the old space; as a Buffer
 * its bytes lie outside the heap. The socket writes them without encoding them again, so the
 * conversion moves work rather than adding it.
 */
const SEND_AS_BYTES_FROM = 4096;

export function sendStoredAnswer(request: FastifyRequest, reply: FastifyReply, answer: StoredAnswer) {
  request.disclosedPatientIds = answer.disclosedPatientIds;
  reply.header('ETag', answer.etag);
  if (ifNoneMatchHits(request.headers['if-none-match'], answer.etag)) {
    return reply.code(304).send();
  }
  const { body } = answer;
  return reply
    .header('Content-Type', JSON_CONTENT_TYPE)
    .send(typeof body === 'string' && body.length >= SEND_AS_BYTES_FROM ? Buffer.from(body) : body);
}

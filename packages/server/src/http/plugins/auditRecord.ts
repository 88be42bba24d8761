/** One request's audit record, as observed when its answer is final: IDs only, never PHI. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isFoldedRecord } from '../../audit/auditQueue.js';
import type { AuditFields, AuditRecord } from '../../store/auditRows.js';

const MAX_ID_LENGTH = 128;

/**
 * Whether the request's record waits for nothing and goes to the folded queue after the answer
 * (auditQueue.ts, isFoldedRecord): a key flooding past its limit must not make every other key's
 * answers wait behind a group commit of its refusals.
 */
export function auditedAfterAnswer(request: FastifyRequest): boolean {
  const subject = request.auditSubject;
  if (subject === undefined) return false;
  return isFoldedRecord({
    key_id: subject.keyId,
    organization_id: subject.organizationId,
    reason_code: request.reasonCode ?? null,
  });
}

/**
 * The ID as the client sent it, bounded, with NUL replaced: PostgreSQL text cannot hold it, and
 * one client's odd ID must not fail the group commit that other requests' answers wait for.
 */
function idParam(request: FastifyRequest, name: string): string | null {
  const value = (request.params as Record<string, string> | undefined)?.[name];
  return value === undefined ? null : value.slice(0, MAX_ID_LENGTH).replaceAll('\0', '\uFFFD');
}

/**
 * The record's fields without the patients its answer disclosed: all a folded record holds, and
 * built once for every refused request, so built without them (a copy leaving them out cost a
 * share of a flood's cheapest answer).
 */
export function auditFieldsOf(request: FastifyRequest, reply: FastifyReply, at: number): AuditFields {
  return {
    at,
    request_id: request.id,
    organization_id: request.auditSubject?.organizationId ?? null,
    key_id: request.auditSubject?.keyId ?? null,
    method: request.method,
    route: request.routeId ?? request.routeOptions.config?.routeId ?? 'unmatched',
    encounter_id: idParam(request, 'encounter_id'),
    document_id: idParam(request, 'document_id'),
    status: reply.statusCode,
    reason_code: request.reasonCode ?? null,
    duration_ms: Math.round(reply.elapsedTime * 100) / 100,
  };
}

export function auditRecordOf(request: FastifyRequest, reply: FastifyReply, at: number): AuditRecord {
  const record: AuditRecord = auditFieldsOf(request, reply, at);
  // Only an answer that carries data discloses (a 304 confirms what the client holds). The IDs go
  // as the answer listed them: the writer names the set by its sorted, distinct members.
  if (record.status < 400) record.patient_ids = request.disclosedPatientIds ?? [];
  return record;
}

/**
 * `Eds-Key-Expires-At` (decisions.md, Rotation): every answer to a rolled key during its grace
 * carries the time it stops working, so the partner sees the deadline without asking. Only rolled
 * keys carry it; a key's own expiry set at creation is not announced.
 */
import type { FastifyReply } from 'fastify';
import type { ApiKey } from '../../store/apiKeys.js';
import { toIso } from '../../time.js';

export const KEY_EXPIRES_AT_HEADER = 'Eds-Key-Expires-At';

export function announceRolledKeyDeadline(reply: FastifyReply, key: ApiKey): void {
  if (key.successorId !== null && key.expiresAt !== null) {
    reply.header(KEY_EXPIRES_AT_HEADER, toIso(key.expiresAt));
  }
}

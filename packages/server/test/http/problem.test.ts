/**
 * Problem bodies: a refusal built once and shared by every request it answers renders the same
 * bytes as one built for the request, with each answer's own request id.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { ApiError, sharedRefusal } from '../../src/domain/errors.js';
import { problemJson } from '../../src/http/problem.js';

test('happy: a shared refusal renders byte for byte as the same refusal built per request', () => {
  const detail = 'Send the key as `Authorization: Bearer <key>` — "exactly" once.';
  const shared = sharedRefusal('malformed_token', detail);
  for (const requestId of ['req_6NB3IVfucQyt1psALTvkOq', 'req_other', 'req_"quoted"\\\u0000']) {
    const own = new ApiError('malformed_token', detail);
    assert.equal(problemJson(shared, requestId), problemJson(own, requestId), requestId);
    assert.equal(JSON.parse(problemJson(shared, requestId)).request_id, requestId);
  }
});

test('error: a shared refusal cannot be changed by one request under another, and can still be logged', () => {
  const shared = sharedRefusal('missing_bearer', 'Send a key.');
  for (const member of ['detail', 'message', 'status', 'reasonCode', 'headers', 'field']) {
    assert.throws(
      () => {
        (shared as unknown as Record<string, unknown>)[member] = 'changed';
      },
      TypeError,
      member,
    );
  }
  assert.equal(JSON.parse(problemJson(shared, 'req_x')).detail, 'Send a key.');
  const lines: string[] = [];
  const logger = pino({}, { write: (line: string) => lines.push(line) });
  logger.error({ err: shared }, 'refused');
  logger.error({ err: shared }, 'refused again');
  assert.equal(lines.length, 2);
  assert.equal(JSON.parse(lines[1]!).err.message, 'Send a key.');
});

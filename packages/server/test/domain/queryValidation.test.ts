import assert from 'node:assert/strict';
import { test } from 'node:test';
import Type from 'typebox';
import { ListEncountersQuery, NoQuery } from '../../src/contract/listQuery.js';
import { ApiError } from '../../src/domain/errors.js';
import { LIST_QUERY_RULES } from '../../src/domain/listQuery.js';
import { compileQuery, type RawQuery } from '../../src/domain/queryValidation.js';

const list = compileQuery(ListEncountersQuery, LIST_QUERY_RULES);
const none = compileQuery(NoQuery);

function refusal(run: () => unknown): { code: string; message: string; field: string | undefined } {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ApiError);
    return { code: error.reasonCode, message: error.detail, field: error.field ?? undefined };
  }
  assert.fail('expected a refusal');
}

const at =
  (query: RawQuery, url = '/x') =>
  () =>
    list(query, url);

test('no parameters: the schema defaults', () => {
  assert.deepEqual(list({}, '/x'), { limit: 50, offset: 0, sort_order: 'desc' });
});

test('values are read from text by the schema: integers canonical, enums and date-times as sent', () => {
  assert.deepEqual(
    list({ limit: '100', offset: '0', sort_order: 'asc', start_at: '2026-05-01T00:00:00+02:00' }, '/x'),
    { limit: 100, offset: 0, sort_order: 'asc', start_at: '2026-05-01T00:00:00+02:00' },
  );
});

test('a bad value answers its parameter code with a message made from the schema bounds', () => {
  assert.deepEqual(refusal(at({ limit: '0' })), {
    code: 'invalid_limit',
    message: 'limit must be a whole number from 1 to 100, given once.',
    field: 'limit',
  });
  for (const text of ['01', '1.0', '+1', ' 1', '1e1', '10001', '9'.repeat(400)]) {
    assert.equal(refusal(at({ offset: text })).code, 'invalid_offset', text);
  }
  assert.deepEqual(refusal(at({ sort_order: 'ASC' })), {
    code: 'invalid_sort',
    message: 'sort_order must be asc or desc, given once.',
    field: 'sort_order',
  });
  assert.deepEqual(refusal(at({ end_at: '2026-02-30T00:00:00Z' })), {
    code: 'invalid_query',
    message: 'end_at must be an RFC 3339 date-time with an offset (e.g. 2026-05-01T00:00:00Z), given once.',
    field: 'end_at',
  });
  assert.equal(refusal(at({ start_at: '2026-05-01T00:00:00' })).code, 'invalid_query');
});

test('a parameter given twice is invalid for its own code', () => {
  assert.equal(refusal(at({ sort_order: ['asc', 'asc'] })).code, 'invalid_sort');
});

test('order: unsupported keys, then parameters in the schema order, then the rule across them', () => {
  assert.equal(refusal(at({ sort_order: 'x', limit: '0', owner: '1' })).code, 'unsupported_filter');
  assert.equal(refusal(at({ sort_order: 'x', offset: '-1', limit: '0' })).code, 'invalid_limit');
  assert.equal(refusal(at({ end_at: 'x', sort_order: 'x' })).code, 'invalid_sort');
  assert.deepEqual(
    refusal(at({ start_at: '2026-05-01T00:00:00Z', end_at: '2026-05-01T00:00:00Z', limit: '5' })),
    { code: 'invalid_query', message: 'start_at must be earlier than end_at.', field: undefined },
  );
});

test('the first unsupported key as sent decides, integer-like keys included', () => {
  assert.equal(refusal(() => list({ 5: '2', zzz: '1' }, '/x?zzz=1&5=2')).field, 'zzz');
  assert.equal(refusal(() => none({ limit: '1' }, '/x?limit=1')).field, 'limit');
  assert.deepEqual(none({}, '/x'), {});
});

test('a schema parameter without a reason code is refused when the route is compiled', () => {
  const schema = Type.Object({ limit: Type.Optional(Type.Integer()) });
  assert.throws(() => compileQuery(schema, { reasons: {} as { limit: 'invalid_limit' } }), /no reason code/);
});

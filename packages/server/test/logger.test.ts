/**
 * The request line written without pino's pass over it is the line pino writes: an operator's
 * log pipeline cannot tell them apart, and what a client puts in a path cannot break the JSON.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { createLogger, type FlatLineFields, flatInfoLine } from '../src/logger.js';

function capture(level: string) {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: createLogger(level, sink), lines };
}

const FIELDS: FlatLineFields = {
  req_id: 'req_01JABCDEF',
  method: 'GET',
  route: 'getEncounter',
  path: '/external/v1/encounters/enc_1',
  status: 200,
  reason_code: null,
  duration_ms: 1.25,
  organization_id: undefined,
  completed: true,
};

const withoutTime = (line: string) => {
  const { time, ...rest } = JSON.parse(line) as { time: string };
  assert.match(time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  return rest;
};

test('happy: a flat line has the fields, their order, level, bindings and message pino gives the same fields', () => {
  const { logger, lines } = capture('info');
  const child = logger.child({ component: 'media_host' });
  child.info(FIELDS, 'request');
  flatInfoLine(child, 'request')(FIELDS);
  assert.equal(lines.length, 2);
  const [byPino, byHand] = lines.map(withoutTime);
  assert.deepEqual(byHand, byPino);
  assert.deepEqual(Object.keys(byHand!), Object.keys(byPino!), 'the same order');
  assert.equal(JSON.stringify(byHand), JSON.stringify(byPino));
  assert.equal((byHand as { component: string }).component, 'media_host');
  assert.equal('organization_id' in byHand!, false, 'an undefined field is left out');
});

test('error: quotes, backslashes, newlines and control characters in a path stay inside one JSON line', () => {
  const { logger, lines } = capture('info');
  const path = '/external/v1/encounters/a"b\\c\nd\u0000e\u2028f';
  flatInfoLine(logger, 'request')({ ...FIELDS, path });
  assert.equal(lines.length, 1);
  assert.equal((JSON.parse(lines[0]!) as { path: string }).path, path);
});

test('happy: nothing is written below info, and the level is read at each line', () => {
  const { logger, lines } = capture('warn');
  const line = flatInfoLine(logger, 'request');
  line(FIELDS);
  assert.deepEqual(lines, []);
  logger.level = 'info';
  line(FIELDS);
  assert.equal(lines.length, 1);
});

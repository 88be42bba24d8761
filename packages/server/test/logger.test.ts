/**
 * The request line written without pino's pass over it is the line pino writes: an operator's
 * log pipeline cannot tell them apart, and what a client puts in a path cannot break the JSON.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import pino from 'pino';
import { createLogger, type FlatLineFields, flatInfoLine, type Logger } from '../src/logger.js';

function sink() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { stream, lines };
}

function capture(level: string) {
  const { stream, lines } = sink();
  return { logger: createLogger(level, stream), lines };
}

/** The line with its time taken out, byte for byte otherwise. */
const timeless = (line: string) => line.replace(/"time":("[^"]*"|\d+)/, '"time":0');

/** Writes the same fields through pino and by hand; both lines, as written. */
function bothWays(logger: Logger, lines: string[], fields: FlatLineFields, message = 'request') {
  logger.info(fields, message);
  flatInfoLine(logger, message)(fields);
  assert.equal(lines.length, 2);
  return lines.map(timeless);
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
  const [byPino, byHand] = bothWays(child, lines, FIELDS);
  assert.equal(byHand, byPino, 'byte for byte, the time aside');
  const parsed = withoutTime(lines[1]!) as Record<string, unknown>;
  assert.equal(parsed.component, 'media_host');
  assert.equal('organization_id' in parsed, false, 'an undefined field is left out');
});

test('error: quotes, backslashes, newlines and control characters in a path stay inside one JSON line', () => {
  const { logger, lines } = capture('info');
  const path = '/external/v1/encounters/a"b\\c\nd\u0000e\u2028f';
  const [byPino, byHand] = bothWays(logger, lines, { ...FIELDS, path });
  assert.equal(byHand, byPino);
  assert.equal((JSON.parse(lines[1]!) as { path: string }).path, path);
});

test("happy: a logger set up otherwise (pino's own time, another message key) gets pino's line", () => {
  const { stream, lines } = sink();
  const logger = pino({ messageKey: 'message', base: { service: 'other' } }, stream);
  const [byPino, byHand] = bothWays(logger, lines, FIELDS);
  assert.equal(byHand, byPino);
  assert.match(lines[1]!, /"time":\d+/);
});

test('happy: a logger that adds to each line (a mixin) has its lines written by pino, mixin included', () => {
  const { stream, lines } = sink();
  const logger = pino({ mixin: () => ({ trace_id: 't1' }) }, stream);
  const [byPino, byHand] = bothWays(logger, lines, FIELDS);
  assert.equal(byHand, byPino);
  assert.match(lines[1]!, /"trace_id":"t1"/);
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

/**
 * A list body is the page's summaries joined, whatever byte counts the database gave with them: a
 * count that disagrees with a summary's UTF-8 (too low or too high) must neither cut the body
 * short nor send the uncleared bytes of an oversized buffer.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { listBody } from '../../src/domain/listBody.js';
import type { PageRow } from '../../src/readModel/read/pages.js';

const TAIL = '],"limit":50,"offset":0,"total":3}';
const SUMMARIES = ['{"name":"Zoë"}', '{"note":"pressão 💊"}', '{"plain":"ascii"}'];

function rows(bytesOf: (summary: string) => number): PageRow[] {
  return SUMMARIES.map((summary, i) => ({
    summary,
    summary_bytes: bytesOf(summary),
    etag: `"t${i}"`,
    patient_id: `pat_${i}`,
  }));
}

const EXPECTED = `{"items":[${SUMMARIES.join(',')}${TAIL}`;

test('happy: with the database counting UTF-8 bytes, the body is the summaries joined', () => {
  assert.equal(listBody(rows(Buffer.byteLength), TAIL).toString('utf8'), EXPECTED);
});

test('edge: counts in characters instead of bytes (too low) still give the whole body', () => {
  const body = listBody(
    rows((s) => s.length),
    TAIL,
  );
  assert.equal(body.toString('utf8'), EXPECTED);
  assert.equal(body.length, Buffer.byteLength(EXPECTED));
});

test('edge: counts too high by a few bytes give the exact body, no trailing bytes', () => {
  const body = listBody(
    rows((s) => Buffer.byteLength(s) + 3),
    TAIL,
  );
  assert.equal(body.toString('utf8'), EXPECTED);
  assert.equal(body.length, Buffer.byteLength(EXPECTED));
});

test('edge: an empty page is the head and the tail alone', () => {
  assert.equal(listBody([], TAIL).toString('utf8'), `{"items":[${TAIL}`);
});

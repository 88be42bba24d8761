/**
 * A list page's body: the stored summaries written straight into bytes allocated once at their
 * final size (joined as a string first, the page was copied once more before its bytes).
 */
import { Buffer } from 'node:buffer';
import type { PageRow } from '../readModel/read/pages.js';

const ITEMS_HEAD = '{"items":[';
const COMMA = 0x2c;

/**
 * The body `{"items":[…` + `tail`. Sized from the byte counts the database gave with each summary,
 * which saves measuring every summary again. A count that disagrees with the summary's own UTF-8
 * (a PostgreSQL database whose encoding is not UTF-8, say) is caught row by row, and the body is
 * then built from measured lengths instead: never a body cut short or padded with uncleared bytes.
 */
export function listBody(rows: readonly PageRow[], tail: string): Buffer {
  const body =
    bodySizedBy(rows, tail, (row) => row.summary_bytes) ??
    bodySizedBy(rows, tail, (row) => Buffer.byteLength(row.summary));
  if (body === undefined) throw new Error('list body: length miscounted');
  return body;
}

function bodySizedBy(
  rows: readonly PageRow[],
  tail: string,
  bytesOf: (row: PageRow) => number,
): Buffer | undefined {
  let length = ITEMS_HEAD.length + tail.length + Math.max(rows.length - 1, 0);
  for (const row of rows) length += bytesOf(row);
  // allocUnsafe's bytes are not cleared: every write is checked, so none of them is ever sent.
  const body = Buffer.allocUnsafe(length);
  let at = body.write(ITEMS_HEAD, 0, 'latin1');
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    if (i > 0) body[at++] = COMMA;
    const written = body.write(row.summary, at);
    if (written !== bytesOf(row)) return undefined;
    at += written;
  }
  return at + body.write(tail, at, 'latin1') === length ? body : undefined;
}

/** Reads an NDJSON file a line at a time, so memory does not grow with the file. */
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream';
import split from 'split2';

export interface NumberedLine {
  /** 1-based, counting blank lines too, as an editor shows them. */
  readonly number: number;
  readonly text: string;
}

/**
 * Every non-blank line with its number. A UTF-8 byte-order mark on the first line is dropped.
 * Lines end at `\n` (or `\r\n`) only, as NDJSON says: JSON leaves U+2028 and U+2029 unescaped
 * inside strings, and node:readline (from Node.js 24) ends lines at them, cutting clinical text
 * in two.
 */
export async function* readNdjsonLines(path: string): AsyncGenerator<NumberedLine> {
  const input = createReadStream(path, { highWaterMark: 1 << 20 });
  // pipeline carries a read error (a file gone, a directory) into the line stream's iteration.
  const lines = pipeline(input, split(/\r?\n/), () => {});
  let number = 0;
  try {
    for await (const raw of lines as AsyncIterable<string>) {
      number += 1;
      const text = number === 1 && raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
      if (text.trim() !== '') yield { number, text };
    }
  } finally {
    lines.destroy();
  }
}

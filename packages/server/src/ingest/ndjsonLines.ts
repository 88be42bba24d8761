/** Reads an NDJSON file a line at a time, so memory does not grow with the file. */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';

export interface NumberedLine {
  /** 1-based, counting blank lines too, as an editor shows them. */
  readonly number: number;
  readonly text: string;
}

/** Every non-blank line with its number. A UTF-8 byte-order mark on the first line is dropped. */
export async function* readNdjsonLines(path: string): AsyncGenerator<NumberedLine> {
  const input = createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 });
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  let number = 0;
  try {
    for await (const raw of lines) {
      number += 1;
      const text = number === 1 && raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
      if (text.trim() !== '') yield { number, text };
    }
  } finally {
    lines.close();
    input.destroy();
  }
}

/** What `eds` writes: one JSON object on stdout for results, plain sentences on stderr for people. */
import { once } from 'node:events';

export function printJson(value: unknown): void {
  // Readable on a terminal, one line when piped (scripts read it either way).
  const text = process.stdout.isTTY ? JSON.stringify(value, null, 2) : JSON.stringify(value);
  process.stdout.write(`${text}\n`);
}

/** Writes a line to stdout, waiting when the reader is slower (NDJSON output can be large). */
export async function writeLine(line: string): Promise<void> {
  if (!process.stdout.write(`${line}\n`)) await once(process.stdout, 'drain');
}

export function note(message: string): void {
  process.stderr.write(`${message}\n`);
}

/**
 * JSON-lines logs (pino). Credentials and signed links never reach a log line: the
 * Authorization header is redacted, and URLs are logged without their query string.
 */
import pino, { type Logger } from 'pino';

export type { Logger };

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  'token',
  '*.token',
  'signing_secret',
  '*.signing_secret',
  'audio_url',
  '*.audio_url',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'eds' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}

/** A path without its query string (the query of a media link is its signature). */
export function pathOnly(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/** Fields of a line that redaction has nothing to take out of: ids, numbers, codes, a path. */
export type FlatLineFields = Readonly<Record<string, string | number | boolean | null | undefined>>;

/**
 * An `info` line of flat fields, the one pino would write (level, time, the logger's bindings,
 * the fields in order, the message), built here and written to the logger's own destination.
 * Pino runs its redaction over every object it logs and builds the line piece by piece; for the
 * request line every answer writes at `info`, that cost about a fifth of a 401's CPU. Only for
 * fields that can hold no credential, signed link or PHI: nothing here is redacted.
 */
export function flatInfoLine(logger: Logger, message: string): (fields: FlatLineFields) => void {
  const stream = (logger as unknown as Record<symbol, pino.DestinationStream>)[pino.symbols.streamSym]!;
  const bindings = (logger as unknown as Record<symbol, string>)[pino.symbols.chindingsSym] ?? '';
  const head = `{"level":${logger.levels.values.info},"time":"`;
  const tail = `,"msg":${JSON.stringify(message)}}\n`;
  return (fields) => {
    if (!logger.isLevelEnabled('info')) return;
    const body = JSON.stringify(fields);
    stream.write(
      `${head}${new Date().toISOString()}"${bindings}${body.length > 2 ? `,${body.slice(1, -1)}` : ''}${tail}`,
    );
  };
}

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

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

const symbols = pino.symbols as typeof pino.symbols & { readonly msgPrefixSym: symbol };

/**
 * An `info` line of flat fields, the one pino would write (its level text, time, the logger's
 * bindings, the fields in order, the message key and line end, all taken from the logger),
 * built here and written to the logger's own destination. Pino runs its redaction over every
 * object it logs and builds the line field by field; for the request line every answer writes at
 * `info`, that was about a tenth of a 401's CPU. Only for fields that can hold no credential,
 * signed link or PHI: nothing here is redacted, and no serializer runs. A logger that does more
 * with each line (a mixin, a hook, a log formatter, a message prefix or nested key, a multistream
 * that wants each line's level) gets the fields through `logger.info` instead.
 */
export function flatInfoLine(logger: Logger, message: string): (fields: FlatLineFields) => void {
  const part = <T>(symbol: symbol) => (logger as unknown as Record<symbol, unknown>)[symbol] as T;
  const hooks = part<{ logMethod?: unknown; streamWrite?: unknown } | undefined>(symbols.hooksSym);
  const stream = part<pino.DestinationStream & Record<symbol, unknown>>(symbols.streamSym);
  if (
    stream[symbols.needsMetadataGsym] === true ||
    part(symbols.mixinSym) ||
    hooks?.logMethod ||
    hooks?.streamWrite ||
    part<{ log?: unknown } | undefined>(symbols.formattersSym)?.log ||
    part(symbols.msgPrefixSym) ||
    part(symbols.nestedKeySym)
  ) {
    return (fields) => logger.info(fields, message);
  }
  const level = part<Record<number, string>>(symbols.lsCacheSym)[logger.levels.values.info!];
  const time = part<() => string>(symbols.timeSym);
  const messageKey = JSON.stringify(part<string>(symbols.messageKeySym));
  const tail = `,${messageKey}:${JSON.stringify(message)}${part<string>(symbols.endSym)}`;
  return (fields) => {
    if (!logger.isLevelEnabled('info')) return;
    const body = JSON.stringify(fields);
    // Bindings are read at each line: `setBindings` may change them.
    const bindings = part<string | undefined>(symbols.chindingsSym) ?? '';
    stream.write(
      `${level}${time.call(logger)}${bindings}${body.length > 2 ? `,${body.slice(1, -1)}` : ''}${tail}`,
    );
  };
}

/**
 * `request.log`, built only when something logs through it. Fastify gives every request a child
 * of the service's logger bound to its request id, and a pino child (bindings serialized,
 * redaction and serializers carried over) costs more than the whole of some answers, while most
 * requests never log through it: their one line is written by the service's logger
 * (plugins/observe.ts). Lines written through it are those of the child it stands for.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

class DeferredChildLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get built(): FastifyBaseLogger {
    this.#child ??= this.parent.child(this.bindings, this.options);
    return this.#child;
  }

  get level(): string {
    return this.#child?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.built.level = level;
  }

  private write(level: Level, args: unknown[]): void {
    (this.built[level] as (...args: unknown[]) => void)(...args);
  }

  // Methods on the prototype, not fields: nothing is allocated per request beyond the object.
  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.write('error', args);
  }
  warn(...args: unknown[]): void {
    this.write('warn', args);
  }
  info(...args: unknown[]): void {
    this.write('info', args);
  }
  debug(...args: unknown[]): void {
    this.write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.write('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.built.child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: the request's child logger, built on its first use. */
export function deferredChildLogger(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  return new DeferredChildLogger(logger, bindings, options);
}

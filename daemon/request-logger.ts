/**
 * The logger of one request (`request.log`, `reply.log`): Fastify makes a pino child per request for the request id
 * it binds, about a microsecond of every request (pino's child, its bindings and levels), though at the daemon's
 * usual levels most requests never write a line. This one makes that child only when a line is written at an enabled
 * level, so every line written still carries the request id.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, Logger } from 'pino';

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
type LogFn = (...args: unknown[]) => void;

class LazyRequestLogger {
  private made: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  /** The pino child with the request's bindings, made on first need. */
  real(): Logger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return (this.made ?? this.parent).level;
  }

  set level(level: string) {
    this.real().level = level;
  }

  isLevelEnabled(level: string): boolean {
    return (this.made ?? this.parent).isLevelEnabled(level);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.real().child(bindings, options);
  }

  silent(): void {}
}

// info(), error()...: write through the child when the level is on, else nothing (and no child made)
for (const level of LEVELS) {
  Object.defineProperty(LazyRequestLogger.prototype, level, {
    value: function (this: LazyRequestLogger, ...args: unknown[]) {
      if (this.isLevelEnabled(level)) (this.real()[level] as LogFn)(...args);
    },
  });
}

/**
 * Fastify's childLoggerFactory: a lazy child (above) of a pino logger; pino's own child, made at once, when the route
 * sets a level or serializers of its own (none does today); Fastify's null logger (no logging) itself.
 */
export function requestLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  const pino = logger as unknown as Logger;
  if (typeof pino.isLevelEnabled !== 'function') return logger.child(bindings, options);
  if (options.level !== undefined || options.serializers !== undefined) return logger.child(bindings, options);
  return new LazyRequestLogger(pino, bindings, options) as unknown as FastifyBaseLogger;
}

/** The agent's own log: one line per event on stderr, `<time> <LEVEL> <message> key=value...`. */

/** Log levels, least to most verbose. */
export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

const ORDER: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };

/** A logger with a level filter. */
export interface Logger {
  error(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  debug(message: string, fields?: Record<string, unknown>): void;
}

/** Format one log line (without the newline). */
export function formatLine(level: LogLevel, message: string, fields: Record<string, unknown> = {}, time = new Date()): string {
  const extra = Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === 'string' && /[\s"=]/.test(v) ? JSON.stringify(v) : String(v)}`)
    .join(' ');
  return `${time.toISOString()} ${level.toUpperCase().padEnd(5)} ${message}${extra ? ` ${extra}` : ''}`;
}

/** A logger writing lines at `level` or more severe to `write` (stderr by default). */
export function createLogger(level: LogLevel = 'info', write: (line: string) => void = (l) => void process.stderr.write(`${l}\n`)): Logger {
  const at = (l: LogLevel) => (message: string, fields?: Record<string, unknown>) => {
    if (ORDER[l] <= ORDER[level]) write(formatLine(l, message, fields));
  };
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') };
}

/** A --log-level value, checked. */
export function parseLogLevel(value: string): LogLevel {
  if (value in ORDER) return value as LogLevel;
  throw new Error(`unknown log level "${value}" (use error, warn, info or debug)`);
}

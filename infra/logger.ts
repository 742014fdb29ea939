import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * The one logger. Children carry context (service, request id, node id).
 * Services log to stdout; maintenance commands pass `stderr` so their own output
 * on stdout stays clean.
 */
export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info', stream: 'stdout' | 'stderr' = 'stdout'): Logger {
  return pino({
    level,
    base: { pid: process.pid },
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.secret', '*.token'],
      censor: '[redacted]',
    },
  }, pino.destination(stream === 'stdout' ? 1 : 2));
}

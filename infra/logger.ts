import { pino, type Logger } from 'pino';

export type { Logger };

/** The one logger. Children carry context (service, request id, node id). */
export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({
    level,
    base: { pid: process.pid },
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.secret', '*.token'],
      censor: '[redacted]',
    },
  });
}

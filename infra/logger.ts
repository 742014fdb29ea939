import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

export type LogFormat = 'auto' | 'json' | 'pretty';

/**
 * The one logger. Children carry context (service, request id, node id).
 * Services log to stdout; maintenance commands pass `stderr` so their own output
 * on stdout stays clean. JSON lines carry ISO-8601 timestamps; `pretty` (or
 * `auto` on a terminal) writes one coloured line per entry through pino-pretty,
 * synchronously on the same descriptor, loaded only then.
 */
export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info', stream: 'stdout' | 'stderr' = 'stdout', format: LogFormat = 'json'): Logger {
  const fd = stream === 'stdout' ? 1 : 2;
  const pretty = format === 'pretty' || (format === 'auto' && (stream === 'stdout' ? process.stdout : process.stderr).isTTY === true);
  return pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.secret', '*.token'],
        censor: '[redacted]',
      },
    },
    pretty ? prettyStream(fd) : pino.destination(fd),
  );
}

function prettyStream(fd: number): DestinationStream {
  const build = createRequire(import.meta.url)('pino-pretty') as (options: Record<string, unknown>) => DestinationStream;
  return build({ destination: fd, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', singleLine: true });
}

import { pino, type Logger } from 'pino';
import { LogRing } from './logs/ring.js';

/**
 * The agent's one logger: JSON lines on stderr (stdout belongs to the `--once`
 * summary; journald collects stderr under systemd) and the same lines into the
 * in-memory ring that log streams and the self-metrics read.
 */
export function createAgentLogger(
  level: string,
  ring: LogRing = new LogRing(),
  stderr: NodeJS.WritableStream = process.stderr,
): { log: Logger; ring: LogRing } {
  const streams = pino.multistream([
    { level: level as pino.Level, stream: ring },
    { level: level as pino.Level, stream: stderr },
  ]);
  return { log: pino({ name: 'dn42-agent', level }, streams), ring };
}

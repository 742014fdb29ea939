import { runCommand } from '../exec.js';
import type { LogEntry } from '../../domain/probes/jobs.js';

/** syslog priorities (journal `PRIORITY`) as log levels. */
const PRIORITY: Record<string, LogEntry['level']> = {
  '0': 'CRITICAL',
  '1': 'CRITICAL',
  '2': 'CRITICAL',
  '3': 'ERROR',
  '4': 'WARNING',
  '5': 'INFO',
  '6': 'INFO',
  '7': 'DEBUG',
};
const PINO: Record<number, LogEntry['level']> = { 10: 'DEBUG', 20: 'DEBUG', 30: 'INFO', 40: 'WARNING', 50: 'ERROR', 60: 'CRITICAL' };

/**
 * One line of `journalctl -o json` as a log entry. The agent writes pino JSON
 * to stdout, so a `MESSAGE` that is such a line gives level, logger and text
 * itself; any other line keeps the journal's priority and identifier.
 */
export function journalEntry(line: string): LogEntry | null {
  let record: { __REALTIME_TIMESTAMP?: string; PRIORITY?: string; SYSLOG_IDENTIFIER?: string; MESSAGE?: unknown };
  try {
    record = JSON.parse(line);
  } catch {
    return null;
  }
  // MESSAGE is an array of bytes when it is not valid UTF-8.
  const message =
    typeof record.MESSAGE === 'string' ? record.MESSAGE : Array.isArray(record.MESSAGE) ? Buffer.from(record.MESSAGE as number[]).toString('utf8') : '';
  const micros = Number(record.__REALTIME_TIMESTAMP);
  const entry: LogEntry = {
    ts: new Date(Number.isFinite(micros) ? Math.floor(micros / 1000) : Date.now()).toISOString(),
    level: PRIORITY[record.PRIORITY ?? '6'] ?? 'INFO',
    logger: record.SYSLOG_IDENTIFIER ?? 'journal',
    message,
  };
  try {
    const pino = JSON.parse(message) as { level?: number; name?: string; msg?: string };
    if (typeof pino === 'object' && pino !== null && typeof pino.msg === 'string') {
      return { ...entry, level: PINO[pino.level ?? 30] ?? entry.level, logger: pino.name ?? entry.logger, message: pino.msg };
    }
  } catch {
    // a plain text line
  }
  return entry;
}

/** The agent unit's last `lines` journal entries (oldest first); throws when the journal cannot be read. */
export async function readJournal(journalctl: string[], lines: number): Promise<LogEntry[]> {
  const argv = [...journalctl, '-u', 'dn42-agent', '-o', 'json', '-n', String(lines), '--no-pager'];
  const outcome = await runCommand(argv, 20_000);
  if (outcome.code !== 0) throw new Error(`journal not available: ${outcome.error ?? (outcome.stderr.trim() || `journalctl exited ${outcome.code}`)}`);
  return outcome.stdout
    .split('\n')
    .map(journalEntry)
    .filter((e): e is LogEntry => e !== null);
}

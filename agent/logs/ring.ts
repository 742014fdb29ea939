/** One log entry as the log stream sends it (`{ts, level, logger, message}`). */
export interface LogEntry {
  ts: string;
  level: 'debug' | 'info' | 'warning' | 'error' | 'critical';
  logger: string;
  message: string;
}

const PINO_LEVELS: Record<number, LogEntry['level']> = { 10: 'debug', 20: 'debug', 30: 'info', 40: 'warning', 50: 'error', 60: 'critical' };

/**
 * The agent's recent log lines in memory: a pino destination (`write(line)`)
 * that keeps the last `capacity` entries and tells subscribers about new ones,
 * for log streams (snapshot and tail) and the self-metrics' warning and error
 * counts.
 */
export class LogRing {
  private readonly entries: LogEntry[] = [];
  private readonly listeners = new Set<(entry: LogEntry) => void>();

  constructor(private readonly capacity = 2000) {}

  /** pino destination: one JSON line per call. */
  write(line: string): void {
    let parsed: { time?: number; level?: number; name?: string; msg?: string; err?: { message?: string } };
    try {
      parsed = JSON.parse(line);
    } catch {
      return;
    }
    const entry: LogEntry = {
      ts: new Date(parsed.time ?? Date.now()).toISOString(),
      level: PINO_LEVELS[parsed.level ?? 30] ?? 'info',
      logger: parsed.name ?? 'dn42-agent',
      message: parsed.msg ?? parsed.err?.message ?? '',
    };
    this.entries.push(entry);
    if (this.entries.length > this.capacity) this.entries.splice(0, this.entries.length - this.capacity);
    for (const listener of this.listeners) listener(entry);
  }

  /** Entries newest last, at most `limit`. */
  recent(limit = this.capacity): LogEntry[] {
    return this.entries.slice(-limit);
  }

  /** Calls `listener` for each new entry until the returned function is called. */
  subscribe(listener: (entry: LogEntry) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

import type { LogEntry } from '../../domain/probes/jobs.js';

/** Warning and error counts over a window, for the runtime snapshot's self-metrics. */
export interface LogStats {
  warnings: number;
  /** `error` and `critical` entries. */
  errors: number;
  last_error_at: string | null;
  last_error_message: string | null;
}

const PINO_LEVELS: Record<number, LogEntry['level']> = { 10: 'DEBUG', 20: 'DEBUG', 30: 'INFO', 40: 'WARNING', 50: 'ERROR', 60: 'CRITICAL' };
const HOUR_MS = 3_600_000;
const MAX_REMEMBERED = 50_000;

/**
 * The agent's recent log lines in memory: a pino destination (`write(line)`)
 * that keeps the last `capacity` entries and tells subscribers about new ones,
 * for log streams (snapshot and tail) and the self-metrics' warning and error
 * counts. Warnings and errors are also remembered apart (their times, for one
 * hour), so a burst of info lines that pushes them out of the ring does not
 * hide them from the hourly counts.
 */
export class LogRing {
  private readonly entries: LogEntry[] = [];
  private readonly listeners = new Set<(entry: LogEntry) => void>();
  private readonly warnings: number[] = [];
  private readonly errors: { at: number; entry: LogEntry }[] = [];

  constructor(private readonly capacity = 2000) {}

  /** pino destination: one JSON line per call. */
  write(line: string): void {
    let parsed: { time?: number; level?: number; name?: string; msg?: string; err?: { message?: string } };
    try {
      parsed = JSON.parse(line);
    } catch {
      return;
    }
    const at = parsed.time ?? Date.now();
    const entry: LogEntry = {
      ts: new Date(at).toISOString(),
      level: PINO_LEVELS[parsed.level ?? 30] ?? 'INFO',
      logger: parsed.name ?? 'dn42-agent',
      message: parsed.msg ?? parsed.err?.message ?? '',
    };
    this.entries.push(entry);
    if (this.entries.length > this.capacity) this.entries.splice(0, this.entries.length - this.capacity);
    this.remember(at, entry);
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

  /** Warnings and errors written in the hour before `now`, and the latest error among them. */
  lastHour(now = Date.now()): LogStats {
    this.prune(now);
    const last = this.errors.at(-1)?.entry;
    return { warnings: this.warnings.length, errors: this.errors.length, last_error_at: last?.ts ?? null, last_error_message: last?.message ?? null };
  }

  private remember(at: number, entry: LogEntry): void {
    if (entry.level === 'WARNING') this.warnings.push(at);
    else if (entry.level === 'ERROR' || entry.level === 'CRITICAL') this.errors.push({ at, entry });
    this.prune(at);
    // A logging storm must not grow memory without bound: the counts saturate instead.
    if (this.warnings.length > MAX_REMEMBERED) this.warnings.shift();
    if (this.errors.length > MAX_REMEMBERED) this.errors.shift();
  }

  private prune(now: number): void {
    const since = now - HOUR_MS;
    while (this.warnings.length && this.warnings[0] <= since) this.warnings.shift();
    while (this.errors.length && this.errors[0].at <= since) this.errors.shift();
  }
}

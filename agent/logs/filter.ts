import { Value } from '@sinclair/typebox/value';
import { LogSpecInput, logSpec, type LogSpec } from '../../domain/probes/spec.js';
import type { LogEntry } from '../../domain/probes/jobs.js';

/**
 * The log spec of a `log_request`, checked against the server's schema and
 * completed the way the server completes it (a journal tail is refused).
 */
export function checkLogSpec(spec: unknown): LogSpec {
  if (!Value.Check(LogSpecInput, spec)) {
    const first = [...Value.Errors(LogSpecInput, spec)][0];
    throw new Error(`invalid log spec: ${first ? `${first.path || '/'} ${first.message}` : 'not an object'}`);
  }
  return logSpec(spec);
}

const RANK: Record<LogEntry['level'], number> = { DEBUG: 0, INFO: 1, WARNING: 2, ERROR: 3, CRITICAL: 4 };

/** Whether an entry passes `min_level` and `contains` (case-insensitive, message or logger). */
export function logFilter(spec: Pick<LogSpec, 'min_level' | 'contains'>): (entry: LogEntry) => boolean {
  const needle = spec.contains?.toLowerCase() ?? null;
  return (entry) =>
    RANK[entry.level] >= RANK[spec.min_level] &&
    (needle === null || entry.message.toLowerCase().includes(needle) || entry.logger.toLowerCase().includes(needle));
}

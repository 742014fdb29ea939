import type { LogSpec, ProbeSpec } from './spec.js';

/**
 * A probe or log-view job: created by an operator, run by the node's agent,
 * streamed to the browser. Nothing about it is an event; the job lives in a
 * table for as long as it is useful (document 3: "nothing is stored").
 *
 *   waiting ──agent opens its stream──▶ running ──`done`──▶ done ──120 s──▶ gone
 *      └──────── deadline passes (agent never came, or ran too long) ──────▶ gone
 */
export type JobKind = 'probe' | 'log';

export type JobSpec = ProbeSpec | LogSpec;

export const JOB_LIMITS = {
  /** Running jobs over all nodes and instances (probes and log views share it). */
  global: 256,
  perNode: 3,
  /** How long a finished job stays readable. */
  keepAfterDoneMs: 120_000,
  /** The agent gets the doorbell at once; it must open the job stream within this. */
  connectTimeoutMs: 30_000,
  /** Buffered messages per job; later output is dropped, `done` always lands. */
  maxMessages: 5_000,
} as const;

/**
 * How long a job may run once the agent has connected. MTU bisection takes up to
 * about 60 s and 30 mtr/traceroute rounds about as long; a tail runs for its
 * `duration_seconds`. The margin covers the agent's start and the last flush.
 */
export function runTimeoutMs(kind: JobKind, spec: JobSpec): number {
  if (kind === 'probe') return 120_000;
  const log = spec as LogSpec;
  return log.mode === 'tail' ? ((log.duration_seconds ?? 120) + 30) * 1000 : 60_000;
}

/** Which SSE event carries an upstream message of the agent, per job kind; anything else is ignored. */
export const STREAM_EVENTS: Record<JobKind, Readonly<Record<string, string>>> = {
  probe: { output: 'output', done: 'done' },
  log: { log: 'logentries', done: 'done' },
};

/**
 * One log entry as the agent's log stream sends it and the console shows it (`{ts, level, logger, message}`).
 * Levels are the words of the log spec's `min_level` and of `--log-level`
 * (Python logging's names), so a reader can compare an entry with its filter.
 */
export interface LogEntry {
  ts: string;
  level: 'DEBUG' | 'INFO' | 'WARNING' | 'ERROR' | 'CRITICAL';
  logger: string;
  message: string;
}

/** The field that names the job in every message of its kind. */
export const JOB_ID_FIELD: Record<JobKind, 'probe_id' | 'log_id'> = { probe: 'probe_id', log: 'log_id' };

export type JobStatus = 'waiting' | 'running' | 'done';

export interface JobTimes {
  status: JobStatus;
  /** Waiting: the connect deadline; running: the run deadline. */
  deadline: Date;
  done_at: Date | null;
}

/** Whether the job can still be streamed: not timed out, and not finished for longer than it is kept. */
export function isLive(job: JobTimes, now: Date): boolean {
  if (job.status === 'done') return job.done_at !== null && now.getTime() < job.done_at.getTime() + JOB_LIMITS.keepAfterDoneMs;
  return now.getTime() < job.deadline.getTime();
}

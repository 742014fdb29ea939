import type { LogSpec } from '../../domain/probes/spec.js';
import { openJobStream, type JobStream } from '../probes/job-stream.js';
import type { AgentRuntime } from '../runtime.js';
import { checkLogSpec, logFilter } from './filter.js';
import { readJournal } from './journal.js';
import type { LogEntry } from '../../domain/probes/jobs.js';
import type { LogRing } from './ring.js';

/** Entries per `log` message, so one frame stays far below the server's 1 MiB limit. */
const BATCH = 200;
/** A tail gathers new entries this long before sending them in one message. */
const TAIL_FLUSH_MS = 500;

/**
 * Serves one `log_request` on `WS /agent/log-stream/{log_id}`: messages
 * `{type: 'log', log_id, seq, entries}` then `{type: 'done', log_id}`. A
 * snapshot sends the last `lines` matching entries of the ring (or of the
 * unit's journal for `source: journal`) and ends; a tail sends the last
 * `lines`, then new entries as they are logged, until `duration_seconds`.
 * A refused spec or unreadable journal ends with `done` carrying `error`.
 * Never rejects.
 */
export async function streamLogs(
  rt: AgentRuntime,
  ring: LogRing,
  logId: string,
  spec: unknown,
  signal?: AbortSignal,
  journalctl: string[] = ['journalctl'],
): Promise<void> {
  const log = rt.logger.child({ name: 'logs', log_id: logId });
  let stream: JobStream;
  try {
    stream = await openJobStream(rt, `/agent/log-stream/${encodeURIComponent(logId)}`);
  } catch (err) {
    log.warn({ err }, 'cannot open the log stream');
    return;
  }
  let seq = 0;
  const send = (entries: LogEntry[]) => {
    for (let i = 0; i < entries.length; i += BATCH) stream.send({ type: 'log', log_id: logId, seq: seq++, entries: entries.slice(i, i + BATCH) });
  };
  const stop = AbortSignal.any([stream.closed, ...(signal ? [signal] : [])]);
  let error: string | undefined;
  try {
    const checked = checkLogSpec(spec);
    if (checked.mode === 'tail') await tail(ring, checked, send, stop);
    else send(await snapshot(ring, checked, journalctl));
  } catch (err) {
    error = (err as Error).message;
  }
  if (stream.closed.aborted) return;
  await stream.finish({ type: 'done', log_id: logId, ...(error ? { error } : {}) });
}

async function snapshot(ring: LogRing, spec: LogSpec, journalctl: string[]): Promise<LogEntry[]> {
  const entries = spec.source === 'journal' ? await readJournal(journalctl, spec.lines) : ring.recent();
  return entries.filter(logFilter(spec)).slice(-spec.lines);
}

/** The recent lines, then live entries in batches, until the duration passes or `stop` aborts. */
async function tail(ring: LogRing, spec: LogSpec, send: (entries: LogEntry[]) => void, stop: AbortSignal): Promise<void> {
  const pass = logFilter(spec);
  send(ring.recent().filter(pass).slice(-spec.lines));
  let pending: LogEntry[] = [];
  const unsubscribe = ring.subscribe((entry) => {
    if (pass(entry)) pending.push(entry);
  });
  const flush = () => {
    if (pending.length) send(pending);
    pending = [];
  };
  const timer = setInterval(flush, TAIL_FLUSH_MS);
  try {
    await new Promise<void>((resolve) => {
      const end = setTimeout(resolve, (spec.duration_seconds ?? 120) * 1000);
      stop.addEventListener(
        'abort',
        () => {
          clearTimeout(end);
          resolve();
        },
        { once: true },
      );
    });
  } finally {
    clearInterval(timer);
    unsubscribe();
    flush();
  }
}

import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { RawData, WebSocket } from 'ws';
import { JOB_ID_FIELD, STREAM_EVENTS, type JobKind } from '../../../domain/probes/jobs.js';
import { jobStore } from '../../../infra/jobs/store.js';
import type { ServiceContext } from '../../shared/context.js';
import type { AgentPrincipal } from './auth.js';

export type { JobKind };

/** Close codes of a job stream (4403 is the contract's; the others name the end). */
export const JOB_STREAM_CLOSE = { done: 1000, refused: 4403, timedOut: 4408 } as const;

/** A log batch as the agent sends it (document 2): `{log_id, seq, entries: [{ts, level, logger, message}]}`. */
const LogBatch = Type.Object({
  type: Type.Literal('log'),
  seq: Type.Integer({ minimum: 0 }),
  entries: Type.Array(Type.Object({ ts: Type.Union([Type.String(), Type.Number()]), level: Type.String(), logger: Type.String(), message: Type.String() })),
});

/**
 * Takes over an accepted `WS /agent/probe-stream/{id}` or `/agent/log-stream/{id}`
 * connection whose agent token already resolved (the hub closed unresolvable ones
 * with 4401). Closes with 4403 when the job is unknown, expired, of the other
 * kind, of another node, or already has its stream. Otherwise stores the
 * agent's `output`/`log` and `done` messages for the job's SSE readers, with the
 * job id taken from the path; `done` ends the channel. When the agent goes away
 * before `done`, the server stores `done` with `error: 'agent disconnected'`.
 */
export async function acceptJobStream(ctx: ServiceContext, kind: JobKind, jobId: string, agent: AgentPrincipal, ws: WebSocket): Promise<void> {
  const idField = JOB_ID_FIELD[kind];
  const events = STREAM_EVENTS[kind];
  const log = ctx.log.child({ job_id: jobId, kind, node_id: agent.node_id });
  let attached = false;
  let finished = false;
  let timer: NodeJS.Timeout | undefined;
  // Frames are stored one after the other, in the order they came; attaching comes first.
  let queue: Promise<void> = Promise.resolve();
  const enqueue = (step: () => Promise<void>) => {
    queue = queue.then(step).catch((err) => {
      log.error({ err }, 'job stream write failed');
      finish(1011, 'internal error');
    });
  };
  const finish = (code: number, reason: string) => {
    finished = true;
    clearTimeout(timer);
    if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(code, reason);
  };

  const store = async (event: string, data: Record<string, unknown>) => {
    const result = await jobStore.append(ctx.pool, jobId, event, { ...data, [idField]: jobId }, ctx.now());
    if (result === 'dropped') log.warn({ event }, 'job buffer full; message dropped');
    if (event === 'done' && result === 'stored') finish(JOB_STREAM_CLOSE.done, 'done');
    else if (result === 'closed') finish(JOB_STREAM_CLOSE.timedOut, 'job timed out');
  };

  // Listen before the first await: the agent may send right after the handshake.
  ws.on('message', (raw: RawData, isBinary: boolean) => {
    const message = isBinary ? undefined : parseFrame(raw);
    const event = message && typeof message.type === 'string' ? events[message.type] : undefined;
    if (!message || !event) {
      log.debug('ignoring an upstream frame that is not a message of this stream');
      return;
    }
    if (message.type === 'log' && !Value.Check(LogBatch, message)) {
      log.warn('ignoring a malformed log batch');
      return;
    }
    enqueue(async () => {
      if (attached && !finished) await store(event, message);
    });
  });
  ws.on('close', () => {
    clearTimeout(timer);
    // Race: the agent may hang up right after sending `done`; the queue stores that first, so this finds the job done.
    enqueue(async () => {
      if (attached && !finished) {
        finished = true;
        // Tracked as background work: a shutting-down instance stores this before its pool closes.
        await ctx.background.run(jobStore.append(ctx.pool, jobId, 'done', { type: 'done', [idField]: jobId, error: 'agent disconnected' }, ctx.now()));
      }
    });
  });

  enqueue(async () => {
    const job = await jobStore.attach(ctx.pool, jobId, kind, agent.node_id, ctx.now());
    if (!job) {
      log.info('job stream refused: unknown, expired, taken or another node');
      return finish(JOB_STREAM_CLOSE.refused, 'unknown or expired job');
    }
    attached = true;
    // The job's deadline is the clock's; past it the stream is closed without `done` (readers see the timeout).
    timer = setTimeout(() => finish(JOB_STREAM_CLOSE.timedOut, 'job timed out'), Math.max(0, job.deadline.getTime() - ctx.now().getTime()));
    timer.unref();
  });
  await queue;
}

function parseFrame(raw: RawData): Record<string, unknown> | undefined {
  // Frame size is bounded by the socket server's maxPayload.
  const bytes = Array.isArray(raw) ? Buffer.concat(raw) : Buffer.isBuffer(raw) ? raw : Buffer.from(raw);
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

import type { Request, Response } from 'express';
import { NotFound } from '../../../domain/errors.js';
import { isLive, type JobKind } from '../../../domain/probes/jobs.js';
import { jobStore, type JobMessage } from '../../../infra/jobs/store.js';
import { jobWatcher } from '../../../infra/jobs/watcher.js';
import type { ServiceContext } from '../../shared/context.js';

/** Re-read even without a notification: the guarantee behind NOTIFY, and how timeouts are seen. */
const POLL_MS = 1_000;
/** A comment line now and then keeps proxies from closing a quiet stream. */
const KEEPALIVE_MS = 15_000;
/** Messages read per query. */
const PAGE = 500;

/**
 * `GET /ui/{probes|logs}/{id}/stream`: Server-Sent Events of one job. Buffered
 * messages first, then live ones as any instance stores them; `done` is the last
 * event and the stream ends after it. A job that times out ends the stream
 * without `done`, which the browser reads as a lost job (document 3). Each
 * event's `id` is its sequence number, so `Last-Event-ID` resumes after it.
 */
export async function streamJob(ctx: ServiceContext, kind: JobKind, jobId: string, req: Request, res: Response): Promise<void> {
  const job = await jobStore.find(ctx.pool, jobId);
  if (!job || job.kind !== kind || !isLive(job, ctx.now())) throw new NotFound(`unknown ${kind} ${jobId}`);

  let gone = false;
  let wake = () => {};
  let woken: boolean; // set before each wait in the loop below
  const signal = () => {
    woken = true;
    wake();
  };
  res.on('close', () => {
    gone = true;
    signal();
  });
  // Watch before the first read: a message stored in between is then either read or announced.
  const unwatch = await jobWatcher(ctx.pool, ctx.log).watch(jobId, signal);
  try {
    res.status(200).set({ 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache, no-transform', 'X-Accel-Buffering': 'no' });
    res.flushHeaders();
    let seq = lastEventId(req);
    let lastWrite = Date.now();
    while (!gone) {
      woken = false;
      // The job before its messages: once it reads `done`, its `done` row is among them (one statement wrote both).
      const current = await jobStore.find(ctx.pool, jobId);
      const messages = await jobStore.messagesAfter(ctx.pool, jobId, seq, PAGE);
      for (const m of messages) {
        res.write(frame(m));
        seq = m.seq;
        lastWrite = Date.now();
        if (m.event === 'done') return;
      }
      if (messages.length === PAGE) continue;
      // Swept, resumed past `done`, or timed out (which ends without `done`): nothing more will come.
      if (!current || current.status === 'done' || !isLive(current, ctx.now())) return;
      if (Date.now() - lastWrite >= KEEPALIVE_MS) {
        res.write(': keepalive\n\n');
        lastWrite = Date.now();
      }
      if (!woken && !gone)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, POLL_MS);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      wake = () => {};
    }
  } finally {
    unwatch();
    if (!gone) res.end();
  }
}

function frame(m: JobMessage): string {
  return `id: ${m.seq}\nevent: ${m.event}\ndata: ${JSON.stringify(m.data)}\n\n`;
}

function lastEventId(req: Request): number {
  const given = req.header('last-event-id');
  return given && /^\d{1,9}$/.test(given) ? Number(given) : 0;
}

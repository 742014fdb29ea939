import type { Response } from 'express';
import { Conflict, TooManyRequests } from '../../../domain/errors.js';
import {
  latencyFromLines,
  mtuFromLines,
  portalProbeSpec,
  probeTarget,
  PROBE_WAIT_MS,
  type LatencyProbe,
  type MtuProbe,
  type PortalProbeKind,
} from '../../../domain/autopeering/probes.js';
import { startJob } from '../../../commands/jobs.js';
import { connectedNode } from '../../../commands/notify.js';
import { isLive } from '../../../domain/probes/jobs.js';
import { probeSpec } from '../../../domain/probes/spec.js';
import { jobStore } from '../../../infra/jobs/store.js';
import { jobWatcher } from '../../../infra/jobs/watcher.js';
import { claimProbe, releaseProbe, storeProbeResult } from '../../../infra/portal/probe-runs.js';
import type { ServiceContext } from '../../shared/context.js';
import { HttpError } from '../../shared/errors.js';
import type { PortalRequestRow } from './requests-read.js';

/** Re-read the job even without a notification (and see the server clock pass the wait). */
const POLL_MS = 250;

export const probeTimeout = (kind: PortalProbeKind) => `the agent did not finish the ${kind === 'mtu' ? 'MTU' : 'latency'} probe in time`;
export const cooldownDetail = (kind: PortalProbeKind, seconds: number) =>
  `${kind === 'mtu' ? 'MTU' : 'latency'} probe cooldown: one per request every 10 minutes; retry in ${seconds} s`;

/**
 * One portal probe, synchronously: the request must be provisioned (409), its
 * node's agent connected (409), the cooldown free (429 with Retry-After); then
 * the console's probe job runs on the agent and its output lines are read once
 * it sends `done`. Past the wait (server clock) or the job's own deadline: 504.
 * The result is stored for the request detail. A probe that could not start
 * (offline agent, job quota) leaves the cooldown free.
 */
export async function runPortalProbe(
  ctx: ServiceContext,
  row: PortalRequestRow,
  kind: PortalProbeKind,
  options: { res?: Response; cooldown?: boolean; signal?: AbortSignal } = {},
): Promise<MtuProbe | LatencyProbe> {
  const id = row.id!;
  if (row.status !== 'provisioned') throw new Conflict(`autopeering request ${id} is not provisioned`);
  const target = probeTarget(row);
  if (!target || row.mtu === null) throw new Conflict(`autopeering request ${id} has no tunnel address to probe`);
  const spec = probeSpec(portalProbeSpec(kind, target, row.mtu));
  await connectedNode(ctx.pool, row.node_id);
  const started = ctx.now();
  const claim = options.cooldown === false ? ({ ok: true } as const) : await claimProbe(ctx.pool, id, kind, started);
  if (!claim.ok) {
    const seconds = Math.max(1, Math.ceil((claim.retryAt.getTime() - started.getTime()) / 1000));
    options.res?.setHeader('Retry-After', String(seconds));
    throw new TooManyRequests(cooldownDetail(kind, seconds));
  }
  let jobId: string;
  try {
    jobId = await startJob(ctx, 'probe', row.node_id, spec);
  } catch (err) {
    if (options.cooldown !== false) await releaseProbe(ctx.pool, id, kind, started);
    throw err;
  }
  const lines = await outputOf(ctx, jobId, started.getTime() + PROBE_WAIT_MS[kind], kind, options.signal);
  const result = kind === 'mtu' ? mtuFromLines(lines, spec.target, row.mtu) : latencyFromLines(lines);
  await storeProbeResult(ctx.pool, id, kind, result, ctx.now());
  return result;
}

/** The job's `output` lines once it is done; 504 once the server clock passes `until` or the job times out. */
async function outputOf(ctx: ServiceContext, jobId: string, until: number, kind: PortalProbeKind, signal?: AbortSignal): Promise<string[]> {
  let wake = () => {};
  const unwatch = await jobWatcher(ctx.pool, ctx.log).watch(jobId, () => wake());
  const onAbort = () => wake();
  signal?.addEventListener('abort', onAbort);
  try {
    for (;;) {
      if (signal?.aborted) throw new Error(`the ${kind} probe wait was abandoned (shutdown)`);
      const job = await jobStore.find(ctx.pool, jobId);
      if (job?.status === 'done') {
        const lines: string[] = [];
        for (let seq = 0; ;) {
          const page = await jobStore.messagesAfter(ctx.pool, jobId, seq);
          if (page.length === 0) break;
          for (const m of page) {
            if (m.event === 'output' && typeof m.data.text === 'string') lines.push(m.data.text);
            if (m.event === 'done' && typeof m.data.error === 'string') throw new HttpError(504, `${probeTimeout(kind)}: ${m.data.error}`);
          }
          seq = page[page.length - 1].seq;
        }
        return lines;
      }
      if (!job || !isLive(job, ctx.now()) || ctx.now().getTime() >= until) throw new HttpError(504, probeTimeout(kind));
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
    signal?.removeEventListener('abort', onAbort);
    unwatch();
  }
}

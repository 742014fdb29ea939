import type { ProbeSpec } from '../../domain/probes/spec.js';
import type { AgentRuntime } from '../runtime.js';
import { openJobStream, type JobStream } from './job-stream.js';
import { streamLines } from './lines.js';
import { mtuBisection } from './mtu.js';
import { checkProbeSpec } from './spec.js';
import { probeArgv } from './tools.js';

/**
 * Runs one `probe_request` (ping, mtr, traceroute or the MTU bisection) and
 * streams it on `WS /agent/probe-stream/{probe_id}`: each output line as
 * `{type: 'output', probe_id, text}`, then `{type: 'done', probe_id,
 * exit_code, error?}`; `error` when the spec is refused, the tool cannot run
 * or exits non-zero. Stops when `signal` aborts (daemon shutdown) or the
 * server closes the channel. Never rejects.
 */
export async function runProbe(rt: AgentRuntime, probeId: string, spec: unknown, signal?: AbortSignal): Promise<void> {
  const log = rt.logger.child({ name: 'probe', probe_id: probeId });
  let stream: JobStream;
  try {
    stream = await openJobStream(rt, `/agent/probe-stream/${encodeURIComponent(probeId)}`);
  } catch (err) {
    log.warn({ err }, 'cannot open the probe stream');
    return;
  }
  const stop = AbortSignal.any([stream.closed, ...(signal ? [signal] : [])]);
  const output = (text: string) => stream.send({ type: 'output', probe_id: probeId, text });
  const done = await runChecked(spec, output, stop).catch((err: Error) => ({ exit_code: null, error: err.message }));
  if (stream.closed.aborted) return log.info('probe stream closed by the server before the probe ended');
  await stream.finish({ type: 'done', probe_id: probeId, ...done });
  log.info({ ...done }, 'probe finished');
}

async function runChecked(spec: unknown, output: (text: string) => void, stop: AbortSignal): Promise<{ exit_code: number | null; error?: string }> {
  const checked: ProbeSpec = checkProbeSpec(spec);
  if (checked.tool === 'mtu') {
    await mtuBisection(checked, output, stop);
    return { exit_code: 0 };
  }
  const argv = probeArgv(checked);
  const code = await streamLines(argv, output, stop);
  if (stop.aborted) return { exit_code: code, error: 'probe aborted' };
  return code === 0 ? { exit_code: 0 } : { exit_code: code, error: `${argv[0]} exited with ${code ?? 'a signal'}` };
}

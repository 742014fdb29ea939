import type { LogRing } from '../logs/ring.js';
import type { AgentRuntime } from '../runtime.js';
import { writeReportedVersion } from '../update/marker.js';
import { flapRounds } from './flaps/round.js';
import { hasHostnameEndpoints, reresolveEndpoints, systemResolve } from './reresolve.js';
import { parseBirdRoutes } from './routes.js';
import { rpkiObservation } from './rpki.js';
import { outputOf } from './output.js';
import { CpuMeter } from './self-metrics.js';
import { observe, snapshotBody } from './snapshot.js';
import { trafficBody } from './traffic.js';
import { parseWgDump } from './wireguard.js';

export interface Telemetry {
  /** Sends a runtime snapshot now (on `snapshot_request`, after an apply); never rejects (logs instead). */
  snapshotNow(reason?: string): Promise<void>;
  /** Stops every timer; resolves when in-flight posts finished or were abandoned. */
  stop(): Promise<void>;
}

export interface TelemetryOptions {
  /** Runtime snapshots; the server calls a node stale after 300 s without one. */
  snapshotMs: number;
  /** Light WireGuard traffic samples (contract: 30 s). */
  trafficMs: number;
  /** Endpoint re-resolution of host-name endpoints. */
  reresolveMs: number;
  /** Routing-table observation (`birdc show route all`, best routes, at most 20,000). */
  routingMs: number;
  /** Prefix flap collection: one look at BIRD's BGP routes and one `/agent/prefix-flaps` report (contract: about every 60 s). */
  flapsMs: number;
  /** Name lookup for re-resolution (the system resolver unless a test gives its own). */
  resolve(host: string): Promise<string>;
}

export const DEFAULT_TELEMETRY: TelemetryOptions = {
  snapshotMs: 60_000,
  trafficMs: 30_000,
  reresolveMs: 120_000,
  routingMs: 300_000,
  flapsMs: 60_000,
  resolve: systemResolve,
};

/**
 * Starts the agent's observation loops: a runtime snapshot at once and then on a
 * timer, traffic samples every 30 s, endpoint re-resolution, the routing
 * table (BIRD's best routes, every 5 minutes) and the prefix flap scores
 * (every minute, agent/telemetry/flaps/). Each loop
 * waits for its previous round (no overlap) and logs failures instead of
 * throwing. The first snapshot the server accepts writes the health gate's
 * marker (agent/update/marker.ts), so a freshly installed version proves that
 * it can report.
 */
export function startTelemetry(rt: AgentRuntime, ring: LogRing, options: Partial<TelemetryOptions> = {}): Telemetry {
  const opts = { ...DEFAULT_TELEMETRY, ...options };
  const log = rt.logger.child({ name: 'telemetry' });
  const cpu = new CpuMeter();
  const inFlight = new Set<Promise<void>>();
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;
  let markerWritten = false;
  const timings: { last_reresolve_seconds?: number; last_routing_collect_seconds?: number } = {};

  const track = (work: Promise<void>): Promise<void> => {
    inFlight.add(work);
    return work.finally(() => inFlight.delete(work));
  };

  const post = async (what: string, path: string, body: unknown): Promise<boolean> => {
    const res = await rt.request('POST', path, body);
    if (res.status !== 200) log.warn({ status: res.status, body: res.body }, `${what} refused by the control server`);
    return res.status === 200;
  };

  const snapshot = async (reason: string) => {
    const body = snapshotBody(rt, ring, cpu, await observe(rt), timings);
    if (!(await post('runtime snapshot', '/agent/runtime-snapshot', body))) return;
    log.debug({ reason }, 'runtime snapshot sent');
    if (!markerWritten) {
      await writeReportedVersion(rt.stateDir, rt.version);
      markerWritten = true;
    }
  };

  const traffic = async () => {
    const interfaces = parseWgDump(await outputOf([...rt.commands.wg, 'show', 'all', 'dump']));
    if (interfaces.length > 0) await post('traffic sample', '/agent/wireguard-traffic', trafficBody(rt.nodeId, interfaces));
  };

  const reresolve = async () => {
    const desired = rt.applied().desired;
    if (!desired || !hasHostnameEndpoints(desired)) return;
    const started = Date.now();
    const current = parseWgDump(await outputOf([...rt.commands.wg, 'show', 'all', 'dump']));
    const items = await reresolveEndpoints(desired, current, { wg: rt.commands.wg, resolve: opts.resolve });
    timings.last_reresolve_seconds = (Date.now() - started) / 1000;
    if (items.length === 0) return;
    for (const item of items.filter((i) => i.reresolved)) log.info(item, `re-resolved the endpoint of ${item.interface}`);
    await post('re-resolution', '/agent/wireguard-reresolve', { node_id: rt.nodeId, checked_at: new Date().toISOString(), interfaces: items });
  };

  const routing = async () => {
    const started = Date.now();
    const observed = await rpkiObservation(rt, parseBirdRoutes(await outputOf([...rt.commands.birdc, 'show', 'route', 'all'], 60_000)).slice(0, 20_000));
    timings.last_routing_collect_seconds = (Date.now() - started) / 1000;
    await post('routing table', '/agent/routing-table', { node_id: rt.nodeId, captured_at: new Date().toISOString(), ...observed });
  };

  const guarded = (what: string, step: () => Promise<void>) => () => track(step().catch((err) => log.warn({ err }, `${what} failed`)));

  /** Runs `round` now and then every `ms`, never two rounds at once. */
  const every = (ms: number, round: () => Promise<void>) => {
    const tick = async () => {
      if (stopped) return;
      await round();
      if (stopped) return;
      const timer = setTimeout(() => {
        timers.delete(timer);
        void tick();
      }, ms).unref();
      timers.add(timer);
    };
    void tick();
  };

  every(
    opts.snapshotMs,
    guarded('runtime snapshot', () => snapshot('timer')),
  );
  every(opts.trafficMs, guarded('traffic sample', traffic));
  every(opts.reresolveMs, guarded('endpoint re-resolution', reresolve));
  every(opts.routingMs, guarded('routing table', routing));
  every(opts.flapsMs, guarded('prefix flaps', flapRounds(rt, log, post)));

  return {
    snapshotNow: (reason = 'request') => guarded('runtime snapshot', () => snapshot(reason))(),
    async stop() {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      await Promise.allSettled([...inFlight]);
    },
  };
}

import { expectResponse } from '../../../support/http.js';
import { reconciliation, snapshot, type AgentHarness } from '../agent/telemetry-support.js';

/** Counters of WireGuard interfaces: name → [rx_bytes, tx_bytes] (cumulative). */
export type Counters = Record<string, [number, number]>;

/**
 * Posts a runtime snapshot through the agent endpoint, captured now by the test
 * clock (or at `capturedAt`), with these WireGuard counters plus an `eth0` that
 * must never count, and waits for its archives and rollups.
 */
export async function postCounters(
  h: AgentHarness,
  nodeId: string,
  counters: Counters,
  extra: { capturedAt?: Date; cpu?: number; rss?: number } = {},
): Promise<void> {
  const names = Object.keys(counters);
  const base = snapshot(nodeId, {});
  const body = {
    ...base,
    captured_at: (extra.capturedAt ?? h.sys.clock.now()).toISOString(),
    interfaces: [
      ...names.map((name) => ({ name, up: true, rx_bytes: counters[name][0], tx_bytes: counters[name][1] })),
      { name: 'eth0', up: true, rx_bytes: 9e12, tx_bytes: 9e12 },
    ],
    wireguard_interfaces: names.map((name) => ({ name, peers: [] })),
    self_metrics: { ...base.self_metrics, cpu: extra.cpu ?? base.self_metrics.cpu, rss: extra.rss ?? base.self_metrics.rss },
  };
  expectResponse(await h.agent[nodeId].post('/agent/runtime-snapshot', body)).status(200);
  await h.sys.context.background.drain();
}

/** Posts a reconciliation report captured now (test clock) and waits for its rollup. */
export async function postReport(h: AgentHarness, nodeId: string, status: 'in_sync' | 'drift' | 'failed'): Promise<void> {
  expectResponse(
    await h.agent[nodeId].post('/agent/reconciliation-report', { ...reconciliation(nodeId, status), captured_at: h.sys.clock.now().toISOString() }),
  ).status(200);
  await h.sys.context.background.drain();
}

/**
 * Snapshots every minute from the clock's now for `minutes`, each interface
 * counting `rate` bytes per second on rx and twice that on tx; the clock ends at
 * the last snapshot. Returns the counters reached.
 */
export async function steadyTraffic(h: AgentHarness, nodeId: string, rates: Record<string, number>, minutes: number, from: Counters = {}): Promise<Counters> {
  const counters: Counters = Object.fromEntries(Object.keys(rates).map((n) => [n, from[n] ?? [0, 0]]));
  for (let m = 0; m <= minutes; m++) {
    if (m > 0) {
      h.sys.clock.advance(60_000);
      for (const [n, r] of Object.entries(rates)) counters[n] = [counters[n][0] + r * 60, counters[n][1] + 2 * r * 60];
    }
    await postCounters(h, nodeId, counters);
  }
  return counters;
}

export const epochIso = (iso: string, plusSeconds = 0): string => new Date(Date.parse(iso) + plusSeconds * 1000).toISOString();

import type { ProbeSpecInput } from '../probes/spec.js';
import type { Displayed } from './view.js';

/**
 * The portal's two probes of a request (document 3: `POST /requests/{id}/probe-mtu`
 * and `/probe-latency`), run by the node's agent through the console's probe
 * jobs and read back from the job's output lines. Pure: which target, which
 * spec, what the lines mean.
 */

export type PortalProbeKind = 'mtu' | 'latency';

/** Document 3, Limits: probe and latency cooldown, 10 minutes per request (and per probe kind). */
export const PROBE_COOLDOWN_MS = 600_000;

/**
 * How long the synchronous call waits for the agent's `done` (server clock):
 * the MTU bisection takes up to about 60 s, the 10-packet latency sample about
 * 10 s; the margin covers the doorbell, the agent's start and the last flush.
 * Past it: 504.
 */
export const PROBE_WAIT_MS: Readonly<Record<PortalProbeKind, number>> = { mtu: 90_000, latency: 30_000 };

/** The latency sample's size (the contract's "10-packet sample"). */
export const LATENCY_PACKETS = 10;

export interface MtuProbe {
  status: 'ok' | 'mismatch' | 'unreachable';
  /** Path MTU inside the tunnel (largest passing DF packet); null when nothing passed. */
  pmtu: number | null;
  /** The tunnel interface's MTU the path was measured against. */
  mtu: number;
}

export interface LatencyProbe {
  rtt_ms_avg: number | null;
  rtt_ms_max: number | null;
  loss_pct: number;
}

/** IPv4 + ICMP headers, IPv6 + ICMPv6 headers (as the agent's bisection counts them). */
const HEADER = { 4: 28, 6: 48 } as const;

/**
 * The peer's tunnel address a probe aims at: its link-local address on the
 * request's interface (link-local form), its ULA (ULA form), its IPv4 tunnel
 * address (two-session form, IPv6 when no IPv4). Null: nothing to aim at.
 */
export function probeTarget(shown: Pick<Displayed, 'form' | 'link_local' | 'peer_ipv4' | 'peer_ipv6' | 'interface_name'>): ProbeSpecInput | null {
  const target =
    shown.form === 'link-local-mp'
      ? shown.link_local
      : shown.form === 'ula-mp'
        ? (shown.peer_ipv6 ?? shown.link_local)
        : (shown.peer_ipv4 ?? shown.peer_ipv6 ?? shown.link_local);
  if (!target) return null;
  return { tool: 'ping', target, interface: shown.interface_name, resolve: false };
}

/** The agent's probe spec of a portal probe: the DF bisection up to the tunnel MTU, or a 10-packet ping. */
export function portalProbeSpec(kind: PortalProbeKind, target: ProbeSpecInput, mtu: number): ProbeSpecInput {
  return kind === 'mtu' ? { ...target, tool: 'mtu', max_size: mtu } : { ...target, tool: 'ping', count: LATENCY_PACKETS };
}

/**
 * The bisection's verdict from its last line `PMTU_PAYLOAD <n>`: the path
 * carries the tunnel MTU (ok), less (mismatch), or nothing (unreachable). A
 * run without that line (the agent stopped early) is unreachable too.
 */
export function mtuFromLines(lines: readonly string[], target: string, mtu: number): MtuProbe {
  const last = [...lines].reverse().find((l) => /^PMTU_PAYLOAD \d+$/.test(l.trim()));
  const payload = last === undefined ? 0 : Number(last.trim().split(' ')[1]);
  if (payload <= 0) return { status: 'unreachable', pmtu: null, mtu };
  const pmtu = payload + HEADER[target.includes(':') ? 6 : 4];
  return { status: pmtu >= mtu ? 'ok' : 'mismatch', pmtu, mtu };
}

/**
 * iputils ping's summary: `10 packets transmitted, 9 received, 10% packet loss`
 * and `rtt min/avg/max/mdev = 0.030/0.042/0.060/0.008 ms` (absent when nothing
 * came back: null times, loss 100).
 */
export function latencyFromLines(lines: readonly string[]): LatencyProbe {
  const text = lines.join('\n');
  const counts = /(\d+) packets transmitted, (\d+) (?:packets )?received/.exec(text);
  const rtt = /= [\d.]+\/([\d.]+)\/([\d.]+)\/[\d.]+ ms/.exec(text);
  const sent = counts ? Number(counts[1]) : 0;
  const received = counts ? Number(counts[2]) : 0;
  const loss = sent > 0 ? Math.round(((sent - received) / sent) * 1000) / 10 : 100;
  return {
    rtt_ms_avg: rtt && received > 0 ? Number(rtt[1]) : null,
    rtt_ms_max: rtt && received > 0 ? Number(rtt[2]) : null,
    loss_pct: loss,
  };
}

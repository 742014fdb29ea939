import type { RuntimeSnapshot } from '../../domain/telemetry/reports.js';
import type { LogRing } from '../logs/ring.js';
import type { AgentRuntime } from '../runtime.js';
import { parseBirdProtocols, type BirdBgpProtocol } from './bird.js';
import { parseIpLinks } from './links.js';
import { outputOf } from './output.js';
import { selfMetrics, type CpuMeter } from './self-metrics.js';
import { parseWgDump, type WgInterface } from './wireguard.js';

/** What a snapshot reads from the node; each part is empty when its program fails (logged as a warning). */
export interface Observed {
  bgp: BirdBgpProtocol[];
  wireguard: WgInterface[];
  links: ReturnType<typeof parseIpLinks>;
}

/** Runs `birdc show protocols all`, `wg show all dump` and `ip -j -s link` side by side. */
export async function observe(rt: AgentRuntime): Promise<Observed> {
  const read = async <T>(what: string, argv: string[], parse: (text: string) => T[]): Promise<T[]> => {
    try {
      return parse(await outputOf(argv));
    } catch (err) {
      rt.logger.warn({ err }, `runtime snapshot: cannot read ${what}`);
      return [];
    }
  };
  const [bgp, wireguard, links] = await Promise.all([
    read('BGP protocols', [...rt.commands.birdc, 'show', 'protocols', 'all'], (t) => parseBirdProtocols(t)),
    read('WireGuard interfaces', [...rt.commands.wg, 'show', 'all', 'dump'], parseWgDump),
    read('interfaces', [...rt.commands.ip, '-j', '-s', 'link'], parseIpLinks),
  ]);
  return { bgp, wireguard, links };
}

/** The `POST /agent/runtime-snapshot` body (closed schema: only its fields, lists cut to its limits). */
export function snapshotBody(rt: AgentRuntime, ring: LogRing, cpu: CpuMeter, seen: Observed, extra: { last_reresolve_seconds?: number } = {}): RuntimeSnapshot {
  const applied = rt.applied();
  return {
    node_id: rt.nodeId,
    generation: applied.generation,
    captured_at: new Date().toISOString(),
    containers: [],
    interfaces: seen.links.slice(0, 1024),
    wireguard_interfaces: seen.wireguard.slice(0, 1024).map((w) => ({
      name: w.name,
      public_key: w.public_key,
      listen_port: w.listen_port,
      ...rt.wireguard?.report(w.name),
      peers: w.peers.slice(0, 64).map((p) => ({
        public_key: p.public_key,
        endpoint: p.endpoint?.slice(0, 256) ?? null,
        latest_handshake_at: p.latest_handshake_at,
        rx_bytes: p.rx_bytes,
        tx_bytes: p.tx_bytes,
      })),
    })),
    bgp_protocols: seen.bgp.slice(0, 2048).map((b) => ({
      name: b.name,
      state: b.state,
      since: b.since,
      remote_asn: b.remote_asn,
      routes_imported: b.imported,
      routes_exported: b.exported,
      routes_imported_v4: b.families.ipv4?.imported ?? null,
      routes_exported_v4: b.families.ipv4?.exported ?? null,
      routes_imported_v6: b.families.ipv6?.imported ?? null,
      routes_exported_v6: b.families.ipv6?.exported ?? null,
      info: protocolInfo(b),
    })),
    self_metrics: { ...selfMetrics(cpu, ring, applied.failures), ...extra },
  };
}

/** BIRD's info column, the last error when the column does not already show it, and filtered routes (the schema has no field for them). */
export function protocolInfo(b: BirdBgpProtocol): string | null {
  const parts = [
    b.info,
    b.last_error && !(b.info ?? '').includes(b.last_error) ? `last error: ${b.last_error}` : null,
    b.filtered ? `${b.filtered} filtered` : null,
  ];
  const text = parts.filter(Boolean).join('; ');
  return text === '' ? null : text.slice(0, 256);
}

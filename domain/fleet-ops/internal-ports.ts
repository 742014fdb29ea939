import { effectivePortRange, PORT_POOLS, portScope } from '../node/port-policy.js';
import type { PortRange } from '../net/ports.js';
import type { InterfaceRecord, NodeEvent } from '../node/events.js';
import type { InterfaceSpec } from '../node/specs.js';
import type { LiveNode } from '../node/state.js';
import { noDetails, type NodeMigration } from './details.js';

/**
 * `POST /fleet/migrate-internal-ports`, fleet-wide: every WireGuard interface
 * of an internal peering whose `listen_port` lies outside the internal pool
 * (52800–52820, narrowed to the node's own `runtime.wireguard_port_range` when
 * it has one) moves to the lowest free port of that range, in (sort_order, id)
 * order. "Free" means no other interface of the node, enabled or not, has it,
 * so re-enabling an interface later cannot collide. The other end of the link
 * dials the old port: each interface of the remote node's internal peering
 * back to this node whose `peer.endpoint` names the old port gets the new one,
 * in the same write. Interfaces without a fixed port are left alone (WireGuard
 * picks one, and nobody dials them).
 */
export function planInternalPorts(nodes: readonly LiveNode[], pool: PortRange = PORT_POOLS.internal): Map<string, NodeMigration> {
  const byId = new Map(nodes.map((n) => [n.node_id, n]));
  const plans = new Map<string, NodeMigration>();
  const specs = new Map<string, Map<number, InterfaceSpec>>();
  const planOf = (nodeId: string) => plans.get(nodeId) ?? plans.set(nodeId, { events: [], details: noDetails() }).get(nodeId)!;
  const specOf = (nodeId: string, iface: InterfaceRecord) => specs.get(nodeId)?.get(iface.id) ?? iface.spec;
  const setSpec = (nodeId: string, id: number, spec: InterfaceSpec) => (specs.get(nodeId) ?? specs.set(nodeId, new Map()).get(nodeId)!).set(id, spec);

  const moves: { node: LiveNode; remote: string; from: number; to: number }[] = [];
  for (const node of [...nodes].sort((a, b) => (a.node_id < b.node_id ? -1 : 1))) {
    const range = targetRange(node, pool);
    const outside = internalInterfaces(node).filter((i) => !inside(i.spec.listen_port!, typeof range === 'string' ? pool : range));
    if (outside.length === 0) continue;
    const details = planOf(node.node_id).details;
    const skip = (i: InterfaceRecord, reason: string) =>
      details.skipped.push({ node_id: node.node_id, kind: 'interface', id: i.id, name: i.spec.name, reason });
    if (typeof range === 'string') {
      for (const i of outside) skip(i, range);
      continue;
    }
    const taken = new Set(node.interfaces.filter((i) => !outside.includes(i) && i.spec.listen_port != null).map((i) => i.spec.listen_port!));
    for (const iface of outside) {
      const port = firstFree(range, taken);
      if (port === undefined) {
        skip(iface, `no free port left in ${range.start}-${range.end}`);
        continue;
      }
      taken.add(port);
      const from = iface.spec.listen_port!;
      setSpec(node.node_id, iface.id, { ...iface.spec, listen_port: port });
      details.changes.push({ node_id: node.node_id, kind: 'interface', id: iface.id, name: iface.spec.name, field: 'spec.listen_port', from, to: port });
      const remote = node.peerings.find((p) => p.id === iface.peering_id)?.remote_node_id;
      if (remote) moves.push({ node, remote, from, to: port });
    }
  }

  for (const move of moves) {
    const remote = byId.get(move.remote);
    if (!remote) continue;
    for (const iface of remote.interfaces) {
      const peering = remote.peerings.find((p) => p.id === iface.peering_id);
      if (!peering?.is_internal || peering.remote_node_id !== move.node.node_id) continue;
      const spec = specOf(remote.node_id, iface);
      const endpoint = spec.peer?.endpoint;
      const parsed = endpoint ? parseEndpoint(endpoint) : undefined;
      if (!parsed || parsed.port !== move.from) continue;
      const next = `${parsed.host}:${move.to}`;
      setSpec(remote.node_id, iface.id, { ...spec, peer: { ...spec.peer, endpoint: next } });
      planOf(remote.node_id).details.changes.push({
        node_id: remote.node_id,
        kind: 'interface',
        id: iface.id,
        name: iface.spec.name,
        field: 'spec.peer.endpoint',
        from: endpoint,
        to: next,
      });
    }
  }

  for (const [nodeId, changed] of specs) {
    const events: NodeEvent[] = [...changed]
      .sort(([a], [b]) => a - b)
      .map(([interface_id, spec]) => ({ type: 'InterfaceUpdated', data: { node_id: nodeId, interface_id, changes: { spec } } }));
    planOf(nodeId).events.push(...events);
  }
  return plans;
}

const inside = (port: number, range: PortRange) => port >= range.start && port <= range.end;

/** WireGuard interfaces of internal peerings with a fixed port, in (sort_order, id) order. */
function internalInterfaces(node: LiveNode): InterfaceRecord[] {
  return node.interfaces
    .filter((i) => (i.spec.kind ?? 'wireguard') === 'wireguard' && i.spec.listen_port != null && portScope(node, i.peering_id) === 'internal')
    .sort((a, b) => a.sort_order - b.sort_order || a.id - b.id);
}

/** Where internal ports of the node belong: the pool within the node's own range; a string says why there is no such place. */
function targetRange(node: LiveNode, pool: PortRange): PortRange | string {
  let own: PortRange;
  try {
    own = effectivePortRange(node, 'internal', { external: pool, internal: pool });
  } catch {
    return 'node runtime.wireguard_port_range is unreadable';
  }
  const range = { start: Math.max(own.start, pool.start), end: Math.min(own.end, pool.end) };
  return range.start <= range.end
    ? range
    : `node runtime.wireguard_port_range ${own.start}-${own.end} does not overlap the internal pool ${pool.start}-${pool.end}`;
}

function firstFree(range: PortRange, taken: ReadonlySet<number>): number | undefined {
  for (let port = range.start; port <= range.end; port++) if (!taken.has(port)) return port;
  return undefined;
}

/** `host:port` or `[v6]:port`; anything else (no port, a bare IPv6 address) is not rewritten. */
export function parseEndpoint(endpoint: string): { host: string; port: number } | undefined {
  const m = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(endpoint.trim());
  return m ? { host: m[1], port: Number(m[2]) } : undefined;
}

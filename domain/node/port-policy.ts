import { Conflict, Validation } from '../errors.js';
import type { InterfaceSpec } from './specs.js';
import type { LiveNode } from './state.js';
import { parsePortRange, type PortRange } from '../net/ports.js';

export { validateNodeFields } from './fields.js';

/**
 * The WireGuard listen-port policy of a node. A node's explicit
 * `base_template.runtime.wireguard_port_range` wins; without one, its effective
 * range is the fleet pool segment of the interface's scope (internal when the
 * interface belongs to an internal peering). The 422 text is the contract's in
 * both cases, naming the effective range.
 */

export type PortScope = 'external' | 'internal';
export type PortPools = Readonly<Record<PortScope, PortRange>>;

export const PORT_POOLS: PortPools = {
  external: { start: 51800, end: 51830 },
  internal: { start: 52800, end: 52820 },
};

export interface ListenPortCandidate {
  /** The interface being updated; absent when it is being created. */
  id?: number;
  spec: InterfaceSpec;
  enabled: boolean;
  peering_id?: number | null;
}

/** The scope of an interface's port: internal when its peering is internal. */
export function portScope(node: LiveNode, peeringId: number | null | undefined): PortScope {
  const peering = peeringId == null ? undefined : node.peerings.find((p) => p.id === peeringId);
  return peering?.is_internal ? 'internal' : 'external';
}

/** The range a port of this scope must lie in on this node. */
export function effectivePortRange(node: LiveNode, scope: PortScope, pools: PortPools = PORT_POOLS): PortRange {
  const runtime = (node.fields.base_template as { runtime?: { wireguard_port_range?: unknown } } | undefined)?.runtime;
  if (runtime?.wireguard_port_range === undefined) return pools[scope];
  const range = parsePortRange(runtime.wireguard_port_range);
  if (!range) {
    throw new Validation('invalid runtime.wireguard_port_range', [
      {
        loc: ['node', 'base_template', 'runtime', 'wireguard_port_range'],
        msg: 'expected "a-b", [a, b] or {start, end} with 1 <= a <= b <= 65535',
        type: 'range',
      },
    ]);
  }
  return range;
}

/** Throws 422 when an enabled interface's port is outside the range, 409 when another enabled interface uses it. */
export function checkListenPort(node: LiveNode, candidate: ListenPortCandidate, pools: PortPools = PORT_POOLS): void {
  const port = candidate.spec.listen_port;
  if (!candidate.enabled || port == null || (candidate.spec.kind ?? 'wireguard') !== 'wireguard') return;

  const range = effectivePortRange(node, portScope(node, candidate.peering_id), pools);
  if (port < range.start || port > range.end) {
    throw new Validation(`wireguard listen_port must be inside node runtime.wireguard_port_range ${range.start}-${range.end}`, [
      { loc: ['body', 'spec', 'listen_port'], msg: `must be inside ${range.start}-${range.end}`, type: 'range' },
    ]);
  }
  const holder = node.interfaces.find((i) => i.id !== candidate.id && i.enabled && (i.spec.kind ?? 'wireguard') === 'wireguard' && i.spec.listen_port === port);
  if (holder) throw new Conflict(`wireguard listen_port ${port} is already used by interface '${holder.spec.name}'`);
}

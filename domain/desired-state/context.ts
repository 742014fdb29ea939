import type { ActiveDnsGroup } from '../dns/state.js';
import type { NodeAddressing } from '../node/specs.js';
import type { Lifecycle } from '../node/state.js';

/**
 * What `materialise()` knows about other nodes of the fleet. The command layer
 * loads these from the nodes' own streams (and guards their versions), so a
 * published state never mixes facts from before and after a concurrent write.
 */
export interface NodeFacts extends NodeAddressing {
  node_id: string;
  lifecycle: Lifecycle;
  /** As reported by the node's agent; null until reported. */
  wireguard_public_key: string | null;
}

/** An internal peering of another node that points at the node being materialised. */
export interface InboundPeering {
  node_id: string;
  peering_id: number;
  name: string;
  enabled: boolean;
}

export interface FleetContext {
  /** Facts of every node this node refers to (internal peerings, topology routers) or that refers to it. */
  nodes: ReadonlyMap<string, NodeFacts>;
  /** Internal peerings of other nodes whose `remote_node_id` is this node. */
  inbound: readonly InboundPeering[];
  /** This node's own WireGuard public key as reported by its agent (null until reported). */
  wireguard_public_key: string | null;
  /**
   * The version this node's agent last reported over its heartbeat (null or
   * absent: never reported). Older agents cannot take `bird.blocked_prefixes`
   * (`takesBlockedPrefixes`), so the document withholds them.
   */
  agent_version?: string | null;
  /** The DNS group this node belongs to (`dns_group_id`), as its stream tells it; null or absent: none. */
  dns_group?: ActiveDnsGroup | null;
}

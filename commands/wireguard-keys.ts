import { decideNode, live } from '../domain/node/decide.js';
import type { EventMetadata } from '../infra/eventstore/types.js';
import { nodesPeeringInternallyWith } from '../projections/fleet/queries.js';
import { hasWriterLocks, TOPOLOGY_STREAM, writeNode, type FleetDeps, type Published } from './fleet-write.js';

export interface WireguardKeyOutcome {
  status: 'stored' | 'matched';
  /** Nodes whose desired state was re-materialised with the new key, sorted. */
  propagated_to: string[];
  published: Published[];
}

/**
 * An agent reports its node's WireGuard public key (and optionally the escrowed
 * private key). The first key is stored and, in the same append, every published
 * node with an enabled internal peering pointing at this node gets a new
 * generation carrying the key. The same key again only refreshes a changed
 * escrow. Another key throws `WireguardKeyMismatch` and nothing is written.
 */
export async function registerWireguardKey(
  deps: FleetDeps,
  nodeId: string,
  publicKey: string,
  escrow: string | null,
  metadata: EventMetadata,
): Promise<WireguardKeyOutcome> {
  const outcome = await writeNode<'stored' | 'matched'>(
    deps,
    nodeId,
    async (state, more) => {
      const node = live(state, nodeId);
      const events = decideNode({ type: 'RegisterWireguardKey', node_id: nodeId, public_key: publicKey, private_key_escrow: escrow }, state);
      const stored = events.some((e) => e.type === 'WireguardKeyRegistered');
      if (!stored) return { events, reason: 'wireguard key escrow refreshed', publish: 'none', result: 'matched' };
      // Race: a concurrent write creating an internal peering towards this node
      // reads this node's stream, so it holds this node's writer lock when it
      // appends, and this lookup runs under that lock. Without writer locks
      // (KurrentDB) that write appends to `fleet-topology`, whose version is read
      // before the peerings are: either this lookup sees that peering or the
      // append fails and decides again.
      if (!hasWriterLocks(deps)) await more(TOPOLOGY_STREAM, 'version');
      const peers = await nodesPeeringInternallyWith(deps.db, node.node_id, { enabledOnly: true });
      return {
        events,
        reason: `wireguard key of ${nodeId} registered`,
        publish: 'none',
        alsoPublish: peers,
        result: 'stored',
      };
    },
    metadata,
  );
  return {
    status: outcome.result,
    propagated_to: outcome.published
      .map((p) => p.node_id)
      .filter((id) => id !== nodeId)
      .sort(),
    published: outcome.published,
  };
}

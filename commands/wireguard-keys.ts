import { live } from '../domain/node/decide.js';
import type { EventMetadata } from '../infra/eventstore/types.js';
import type { FleetDeps, Published } from './fleet-write.js';
import { writeNode } from './node-write.js';

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
    ({ state }) => {
      // The first key is stored (`publicationsFor`: its internal peers are re-materialised), the same one again is a match.
      const stored = !live(state, nodeId).wireguard;
      return {
        commands: [{ type: 'RegisterWireguardKey', node_id: nodeId, public_key: publicKey, private_key_escrow: escrow }],
        reason: stored ? `wireguard key of ${nodeId} registered` : 'wireguard key escrow refreshed',
        result: stored ? 'stored' : 'matched',
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

import type { NodeEvent } from '../node/events.js';
import type { LiveNode } from '../node/state.js';
import { noDetails, type NodeMigration } from './details.js';

/**
 * `POST /fleet/migrate-keys` for one node. One key pair per node: every
 * interface's private key is the node's (`private_key_ref: "node"`, the only
 * value the desired state has), so what can go stale is the *peer* key of an
 * internal link. An internal interface whose spec pins `peer.public_key`
 * overrides the key its remote node registered (and every later key
 * registration propagates past it), so the pin is removed and the link follows
 * the registered key. While the remote node has registered no key yet the pin
 * is kept (it may be the only key that works). External peers' keys are theirs
 * and stay as written.
 *
 * With an offline recovery key configured, a node whose registered key has no
 * escrow is reported: only its agent can supply one, with its next key report.
 *
 * `keyOf` gives a node's registered public key (null: none yet; undefined: no
 * such node).
 */
export function planKeys(node: LiveNode, keyOf: (nodeId: string) => string | null | undefined, escrowExpected: boolean): NodeMigration {
  const node_id = node.node_id;
  const details = noDetails();
  const events: NodeEvent[] = [];
  for (const iface of node.interfaces) {
    const pinned = iface.spec.peer?.public_key;
    const peering = iface.peering_id === null ? undefined : node.peerings.find((p) => p.id === iface.peering_id);
    if (!pinned || !peering?.is_internal || !peering.remote_node_id) continue;
    const registered = keyOf(peering.remote_node_id);
    const skip = (reason: string) => details.skipped.push({ node_id, kind: 'interface', id: iface.id, name: iface.spec.name, reason });
    if (registered === undefined) skip(`remote node ${peering.remote_node_id} does not exist`);
    else if (registered === null) skip(`remote node ${peering.remote_node_id} has registered no key yet; the pinned key stays`);
    else {
      const { public_key: _pin, ...peer } = iface.spec.peer!;
      details.changes.push({ node_id, kind: 'interface', id: iface.id, name: iface.spec.name, field: 'spec.peer.public_key', from: pinned, to: null });
      events.push({ type: 'InterfaceUpdated', data: { node_id, interface_id: iface.id, changes: { spec: { ...iface.spec, peer } } } });
    }
  }
  if (escrowExpected && node.wireguard && node.wireguard.private_key_escrow === null) {
    details.skipped.push({
      node_id,
      kind: 'node',
      id: null,
      name: node_id,
      reason: 'registered key has no escrow; the agent adds it with its next key report',
    });
  }
  return { events, details };
}

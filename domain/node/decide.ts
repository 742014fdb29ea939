import { isDeepStrictEqual } from 'node:util';
import { unreachable, type Decider } from '../decider.js';
import { BadReference, Conflict, IllegalState, NotFound } from '../errors.js';
import { checkListenPort, validateNodeFields } from './port-policy.js';
import type { InterfaceRecord, NodeEvent, PeeringRecord, SessionRecord } from './events.js';
import type { InterfaceSpec, NodeFields, NodePatch, PeeringPatch, SessionSpec } from './specs.js';
import { evolveNode, initialNodeState, type LiveNode, type NodeState } from './state.js';

/**
 * Commands on one node stream. Ids of new child records come from PostgreSQL
 * sequences and arrive in the command; whether a referenced node exists is looked
 * up by the command layer (`remoteExists`), so `decide` stays pure.
 */
export type NodeCommand =
  | { type: 'CreateNode'; node_id: string; fields: NodeFields }
  | { type: 'UpdateNode'; node_id: string; changes: NodePatch }
  | { type: 'DecommissionNode'; node_id: string }
  | { type: 'RecommissionNode'; node_id: string }
  | { type: 'DeleteNode'; node_id: string; published: boolean }
  | { type: 'CreatePeering'; node_id: string; peering: PeeringRecord; remoteExists: boolean }
  | { type: 'UpdatePeering'; node_id: string; peering_id: number; changes: PeeringPatch; remoteExists: boolean }
  | { type: 'DeletePeering'; node_id: string; peering_id: number }
  | { type: 'CreateInterface'; node_id: string; interface: InterfaceRecord }
  | { type: 'UpdateInterface'; node_id: string; interface_id: number; changes: ChildPatch<InterfaceSpec> & { enabled?: boolean } }
  | { type: 'DeleteInterface'; node_id: string; interface_id: number }
  | { type: 'CreateSession'; node_id: string; session: SessionRecord }
  | { type: 'UpdateSession'; node_id: string; session_id: number; changes: ChildPatch<SessionSpec> }
  | { type: 'DeleteSession'; node_id: string; session_id: number }
  | { type: 'RegisterWireguardKey'; node_id: string; public_key: string; private_key_escrow: string | null };

/** A patch of an interface or session: omitted fields stay; `clear_peering` unlinks. */
export interface ChildPatch<Spec> {
  spec?: Spec;
  sort_order?: number;
  peering_id?: number | null;
  clear_peering?: boolean;
}

export function decideNode(command: NodeCommand, state: NodeState): NodeEvent[] {
  const node_id = command.node_id;
  if (command.type === 'CreateNode') {
    if (state.status === 'Live') throw new Conflict(`node ${node_id} already exists`);
    validateNodeFields(command.fields);
    return [{ type: 'NodeCreated', data: { node_id, fields: command.fields } }];
  }
  const node = live(state, node_id);
  switch (command.type) {
    case 'UpdateNode': {
      validateNodeFields({ ...node.fields, ...command.changes });
      // Only what differs from the stored form is recorded; nothing differs, nothing happens.
      const changes = changedFields(command.changes, (key) => node.fields[key] ?? STORED_DEFAULTS[key]);
      return changes ? [{ type: 'NodeUpdated', data: { node_id, changes } }] : [];
    }
    case 'DecommissionNode':
      if (node.lifecycle === 'decommissioned') throw new IllegalState(`node ${node_id} is already decommissioned`);
      return [{ type: 'NodeDecommissioned', data: { node_id } }];
    case 'RecommissionNode':
      if (node.lifecycle !== 'decommissioned') throw new IllegalState(`node ${node_id} is not decommissioned`);
      return [{ type: 'NodeRecommissioned', data: { node_id } }];
    case 'DeleteNode':
      if (command.published && node.lifecycle !== 'decommissioned') {
        throw new IllegalState(`node ${node_id} is live; decommission it before deleting it`);
      }
      return [{ type: 'NodeDeleted', data: { node_id } }];
    case 'CreatePeering': {
      const { peering } = command;
      if (node.peerings.some((p) => p.name === peering.name)) throw new Conflict(`peering ${peering.name} already exists on node ${node_id}`);
      checkRemote(peering.remote_node_id, command.remoteExists);
      return [{ type: 'PeeringCreated', data: { node_id, peering } }];
    }
    case 'UpdatePeering': {
      const current = peeringOf(node, command.peering_id);
      const changes = changedFields(command.changes, (key) => current[key]);
      if (!changes) return [];
      const name = changes.name;
      if (name !== undefined && node.peerings.some((p) => p.name === name)) {
        throw new Conflict(`peering ${name} already exists on node ${node_id}`);
      }
      if (changes.remote_node_id !== undefined) checkRemote(changes.remote_node_id, command.remoteExists);
      return [{ type: 'PeeringUpdated', data: { node_id, peering_id: current.id, changes } }];
    }
    case 'DeletePeering': {
      const peering = peeringOf(node, command.peering_id);
      // A peering takes its tunnel and sessions with it.
      return [
        ...node.interfaces
          .filter((i) => i.peering_id === peering.id)
          .map((i): NodeEvent => ({ type: 'InterfaceDeleted', data: { node_id, interface_id: i.id } })),
        ...node.sessions.filter((s) => s.peering_id === peering.id).map((s): NodeEvent => ({ type: 'BgpSessionDeleted', data: { node_id, session_id: s.id } })),
        { type: 'PeeringDeleted', data: { node_id, peering_id: peering.id } },
      ];
    }
    case 'CreateInterface': {
      const iface = command.interface;
      if (node.interfaces.some((i) => i.spec.name === iface.spec.name)) throw new Conflict(`interface ${iface.spec.name} already exists on node ${node_id}`);
      checkPeering(node, iface.peering_id);
      checkListenPort(node, iface);
      return [{ type: 'InterfaceCreated', data: { node_id, interface: iface } }];
    }
    case 'UpdateInterface': {
      const current = interfaceOf(node, command.interface_id);
      const { changes } = command;
      const next: InterfaceRecord = {
        ...current,
        ...(changes.spec !== undefined ? { spec: changes.spec } : {}),
        ...(changes.enabled !== undefined ? { enabled: changes.enabled } : {}),
        ...(changes.sort_order !== undefined ? { sort_order: changes.sort_order } : {}),
        ...(changes.clear_peering ? { peering_id: null } : changes.peering_id !== undefined ? { peering_id: changes.peering_id } : {}),
      };
      if (next.spec.name !== current.spec.name && node.interfaces.some((i) => i.spec.name === next.spec.name)) {
        throw new Conflict(`interface ${next.spec.name} already exists on node ${node_id}`);
      }
      checkPeering(node, next.peering_id);
      checkListenPort(node, next);
      const { id: _id, ...record } = next;
      return [{ type: 'InterfaceUpdated', data: { node_id, interface_id: current.id, changes: record } }];
    }
    case 'DeleteInterface':
      return [{ type: 'InterfaceDeleted', data: { node_id, interface_id: interfaceOf(node, command.interface_id).id } }];
    case 'CreateSession': {
      const session = command.session;
      if (node.sessions.some((s) => s.spec.name === session.spec.name))
        throw new Conflict(`bgp session ${session.spec.name} already exists on node ${node_id}`);
      checkPeering(node, session.peering_id);
      return [{ type: 'BgpSessionCreated', data: { node_id, session } }];
    }
    case 'UpdateSession': {
      const current = sessionOf(node, command.session_id);
      const { changes } = command;
      const next: SessionRecord = {
        ...current,
        ...(changes.spec !== undefined ? { spec: changes.spec } : {}),
        ...(changes.sort_order !== undefined ? { sort_order: changes.sort_order } : {}),
        ...(changes.clear_peering ? { peering_id: null } : changes.peering_id !== undefined ? { peering_id: changes.peering_id } : {}),
      };
      if (next.spec.name !== current.spec.name && node.sessions.some((s) => s.spec.name === next.spec.name)) {
        throw new Conflict(`bgp session ${next.spec.name} already exists on node ${node_id}`);
      }
      checkPeering(node, next.peering_id);
      const { id: _id, ...record } = next;
      return [{ type: 'BgpSessionUpdated', data: { node_id, session_id: current.id, changes: record } }];
    }
    case 'DeleteSession':
      return [{ type: 'BgpSessionDeleted', data: { node_id, session_id: sessionOf(node, command.session_id).id } }];
    case 'RegisterWireguardKey':
      return registerWireguardKey(node, command.public_key, command.private_key_escrow);
    default:
      return unreachable(command);
  }
}

/**
 * How an optional node field reads when it was never given (the answer shows
 * the same): a PATCH setting it to this value changes nothing.
 */
const STORED_DEFAULTS: Record<keyof NodePatch, unknown> = {
  asn: undefined,
  router_id: undefined,
  site: null,
  loopback_ipv4: null,
  loopback_ipv6: null,
  link_local: null,
  ipv4_prefixes: [],
  ipv6_prefixes: [],
  inventory: {},
  labels: {},
  base_template: {},
};

/** The fields of a patch whose value differs from the stored one; undefined when none does. */
function changedFields<P extends object>(patch: P, stored: (key: keyof P) => unknown): Partial<P> | undefined {
  const changed = (Object.keys(patch) as (keyof P)[]).filter((key) => patch[key] !== undefined && !isDeepStrictEqual(patch[key], stored(key)));
  return changed.length > 0 ? (Object.fromEntries(changed.map((key) => [key, patch[key]])) as Partial<P>) : undefined;
}

/** Decides several commands in a row, each on the state the previous ones left. */
export function decideAll(commands: readonly NodeCommand[], state: NodeState): { events: NodeEvent[]; state: NodeState } {
  const events: NodeEvent[] = [];
  for (const command of commands) {
    const produced = decideNode(command, state);
    state = produced.reduce(evolveNode, state);
    events.push(...produced);
  }
  return { events, state };
}

export const nodeDecider: Decider<NodeCommand, NodeEvent, NodeState> = {
  initialState: initialNodeState,
  evolve: evolveNode,
  decide: decideNode,
};

export function live(state: NodeState, nodeId: string): LiveNode {
  if (state.status !== 'Live') throw new NotFound(`unknown node ${nodeId}`);
  return state;
}

function peeringOf(node: LiveNode, id: number): PeeringRecord {
  const found = node.peerings.find((p) => p.id === id);
  if (!found) throw new NotFound(`unknown peering ${id}`);
  return found;
}

function interfaceOf(node: LiveNode, id: number): InterfaceRecord {
  const found = node.interfaces.find((i) => i.id === id);
  if (!found) throw new NotFound(`unknown interface ${id}`);
  return found;
}

function sessionOf(node: LiveNode, id: number): SessionRecord {
  const found = node.sessions.find((s) => s.id === id);
  if (!found) throw new NotFound(`unknown bgp session ${id}`);
  return found;
}

/** A child may only link to a peering of its own node. */
function checkPeering(node: LiveNode, peeringId: number | null): void {
  if (peeringId !== null && !node.peerings.some((p) => p.id === peeringId)) {
    throw new BadReference(`peering ${peeringId} not on node ${node.node_id}`);
  }
}

/**
 * The first key an agent reports is stored; the same key again only refreshes a
 * changed escrow; another key is refused (a node keeps its key until an operator acts).
 */
function registerWireguardKey(node: LiveNode, publicKey: string, escrow: string | null): NodeEvent[] {
  const node_id = node.node_id;
  const current = node.wireguard;
  if (!current) return [{ type: 'WireguardKeyRegistered', data: { node_id, public_key: publicKey, private_key_escrow: escrow } }];
  if (current.public_key !== publicKey) throw new WireguardKeyMismatch(node_id);
  if (escrow === null || escrow === current.private_key_escrow) return [];
  return [{ type: 'WireguardKeyEscrowRefreshed', data: { node_id, private_key_escrow: escrow } }];
}

/** The agent reported a WireGuard key other than the registered one (409 `rejected`). */
export class WireguardKeyMismatch extends Conflict {
  constructor(readonly nodeId: string) {
    super(`wireguard public key of node ${nodeId} does not match the registered key`);
  }
}

function checkRemote(remote: string | null | undefined, exists: boolean): void {
  if (remote && !exists) throw new BadReference(`unknown node ${remote}`);
}

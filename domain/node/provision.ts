import type { NodeCommand } from './decide.js';
import type { PeeringRecord } from './events.js';
import type { InterfaceSpec, PeeringIn, SessionSpec } from './specs.js';

/** A peering as its node stream records it, from what a client sent (defaults filled in). */
export function peeringRecord(id: number, input: PeeringIn): PeeringRecord {
  return {
    id,
    name: input.name,
    remote_asn: input.remote_asn,
    remote_node_id: input.remote_node_id ?? null,
    remote_label: input.remote_label ?? null,
    is_internal: input.is_internal ?? false,
    enabled: input.enabled ?? true,
    notes: input.notes ?? null,
  };
}

/** A peering with its interface and sessions, created together. */
export interface ProvisionInput {
  peering: PeeringIn;
  interface: { spec: InterfaceSpec; enabled: boolean; sort_order: number };
  sessions: { spec: SessionSpec; sort_order: number }[];
}

/** The ids a provisioning write reserved for its peering, interface and sessions. */
export interface ProvisionIds {
  peering_id: number;
  interface_id: number;
  session_ids: number[];
}

/** New ids of a kind, reserved by the write that asks (the sequences of `commands/ids.ts`). */
export type ReserveIds = (kind: 'peering' | 'interface' | 'bgp_session', count?: number) => Promise<number[]>;

/** Reserves a provisioned peering's ids inside its write: the peering, its interface and `sessions` sessions. */
export async function reserveProvisionIds(reserve: ReserveIds, sessions: number): Promise<ProvisionIds> {
  const [peering_id] = await reserve('peering');
  const [interface_id] = await reserve('interface');
  return { peering_id, interface_id, session_ids: await reserve('bgp_session', sessions) };
}

/**
 * The commands that create a peering with its interface and sessions, the one
 * way `POST /admin/.../peerings/provision` and the portal's
 * `POST /autopeering/requests` both take. `remoteExists`: whether the node the
 * peering names exists (true when it names none).
 */
export function provisionCommands(nodeId: string, ids: ProvisionIds, input: ProvisionInput, remoteExists: boolean): NodeCommand[] {
  if (input.sessions.length !== ids.session_ids.length)
    throw new Error(`provisioning reserved ${ids.session_ids.length} session ids, the decision has ${input.sessions.length}`);
  const peering = peeringRecord(ids.peering_id, input.peering);
  return [
    { type: 'CreatePeering', node_id: nodeId, peering, remoteExists },
    { type: 'CreateInterface', node_id: nodeId, interface: { id: ids.interface_id, peering_id: ids.peering_id, ...input.interface } },
    ...input.sessions.map((s, i): NodeCommand => ({
      type: 'CreateSession',
      node_id: nodeId,
      session: { id: ids.session_ids[i], peering_id: ids.peering_id, ...s },
    })),
  ];
}

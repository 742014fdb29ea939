import { decideNode, live, type ChildPatch, type NodeCommand } from '../domain/node/decide.js';
import type { InterfaceSpec, SessionSpec } from '../domain/node/specs.js';
import type { LiveNode, NodeState } from '../domain/node/state.js';
import type { EventMetadata } from '../infra/eventstore/types.js';
import { writeNode, type FleetDeps, type NodeWriteOutcome } from './fleet-write.js';
import { nextIds } from './ids.js';

/**
 * One interface or session write: decide it on the node, re-materialise and
 * publish the node. `what` names the record for the generation's reason
 * (`interface dn42_x created`), read from the state the command found.
 */
function writeChild<T>(
  deps: FleetDeps,
  nodeId: string,
  command: NodeCommand,
  what: (node: LiveNode) => string,
  verb: string,
  result: T,
  metadata: EventMetadata,
) {
  return writeNode(
    deps,
    nodeId,
    (state: NodeState) => {
      const events = decideNode(command, state);
      return { events, reason: `${what(live(state, nodeId))} ${verb}`, publish: 'always' as const, result };
    },
    metadata,
  );
}

const interfaceName = (id: number, spec?: InterfaceSpec) => (node: LiveNode) =>
  `interface ${spec?.name ?? node.interfaces.find((i) => i.id === id)?.spec.name ?? id}`;
const sessionName = (id: number, spec?: SessionSpec) => (node: LiveNode) =>
  `bgp session ${spec?.name ?? node.sessions.find((s) => s.id === id)?.spec.name ?? id}`;

export interface InterfaceInput {
  spec: InterfaceSpec;
  peering_id: number | null;
  enabled: boolean;
  sort_order: number;
}

export async function createInterface(deps: FleetDeps, nodeId: string, input: InterfaceInput, metadata: EventMetadata): Promise<NodeWriteOutcome<number>> {
  const [id] = await nextIds(deps.db, 'interface');
  return writeChild(
    deps,
    nodeId,
    { type: 'CreateInterface', node_id: nodeId, interface: { id, ...input } },
    interfaceName(id, input.spec),
    'created',
    id,
    metadata,
  );
}

export function updateInterface(
  deps: FleetDeps,
  nodeId: string,
  id: number,
  changes: ChildPatch<InterfaceSpec> & { enabled?: boolean },
  metadata: EventMetadata,
): Promise<NodeWriteOutcome<void>> {
  return writeChild(
    deps,
    nodeId,
    { type: 'UpdateInterface', node_id: nodeId, interface_id: id, changes },
    interfaceName(id, changes.spec),
    'updated',
    undefined,
    metadata,
  );
}

export function deleteInterface(deps: FleetDeps, nodeId: string, id: number, metadata: EventMetadata): Promise<NodeWriteOutcome<void>> {
  return writeChild(deps, nodeId, { type: 'DeleteInterface', node_id: nodeId, interface_id: id }, interfaceName(id), 'deleted', undefined, metadata);
}

export interface SessionInput {
  spec: SessionSpec;
  peering_id: number | null;
  sort_order: number;
}

export async function createSession(deps: FleetDeps, nodeId: string, input: SessionInput, metadata: EventMetadata): Promise<NodeWriteOutcome<number>> {
  const [id] = await nextIds(deps.db, 'bgp_session');
  return writeChild(deps, nodeId, { type: 'CreateSession', node_id: nodeId, session: { id, ...input } }, sessionName(id, input.spec), 'created', id, metadata);
}

export function updateSession(
  deps: FleetDeps,
  nodeId: string,
  id: number,
  changes: ChildPatch<SessionSpec>,
  metadata: EventMetadata,
): Promise<NodeWriteOutcome<void>> {
  return writeChild(
    deps,
    nodeId,
    { type: 'UpdateSession', node_id: nodeId, session_id: id, changes },
    sessionName(id, changes.spec),
    'updated',
    undefined,
    metadata,
  );
}

export function deleteSession(deps: FleetDeps, nodeId: string, id: number, metadata: EventMetadata): Promise<NodeWriteOutcome<void>> {
  return writeChild(deps, nodeId, { type: 'DeleteSession', node_id: nodeId, session_id: id }, sessionName(id), 'deleted', undefined, metadata);
}

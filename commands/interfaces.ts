import { live, type ChildPatch, type NodeCommand } from '../domain/node/decide.js';
import type { InterfaceSpec, SessionSpec } from '../domain/node/specs.js';
import type { LiveNode } from '../domain/node/state.js';
import type { EventMetadata } from '../infra/eventstore/types.js';
import type { FleetDeps, NodeWriteOutcome } from './fleet-write.js';
import { writeNode, type NodeWriteInput } from './node-write.js';

/**
 * One interface or session write through the write pipeline. `what` names the
 * record for the generation's reason (`interface dn42_x created`), read from the
 * state the command found; a create reserves its id inside the write.
 */
function writeChild<T>(
  deps: FleetDeps,
  nodeId: string,
  child: (reserve: NodeWriteInput['reserve']) => Promise<{ command: NodeCommand; what: (node: LiveNode) => string; result: T }>,
  verb: string,
  metadata: EventMetadata,
): Promise<NodeWriteOutcome<T>> {
  return writeNode(
    deps,
    nodeId,
    async ({ state, reserve }) => {
      const { command, what, result } = await child(reserve);
      return { commands: [command], reason: `${what(live(state, nodeId))} ${verb}`, result };
    },
    metadata,
  );
}

/** A write of an existing child: nothing to reserve. */
const existing = (command: NodeCommand, what: (node: LiveNode) => string) => () => Promise.resolve({ command, what, result: undefined });

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

export function createInterface(deps: FleetDeps, nodeId: string, input: InterfaceInput, metadata: EventMetadata): Promise<NodeWriteOutcome<number>> {
  const create = async (reserve: NodeWriteInput['reserve']) => {
    const [id] = await reserve('interface');
    return { command: { type: 'CreateInterface', node_id: nodeId, interface: { id, ...input } } as const, what: interfaceName(id, input.spec), result: id };
  };
  return writeChild(deps, nodeId, create, 'created', metadata);
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
    existing({ type: 'UpdateInterface', node_id: nodeId, interface_id: id, changes }, interfaceName(id, changes.spec)),
    'updated',
    metadata,
  );
}

export function deleteInterface(deps: FleetDeps, nodeId: string, id: number, metadata: EventMetadata): Promise<NodeWriteOutcome<void>> {
  return writeChild(deps, nodeId, existing({ type: 'DeleteInterface', node_id: nodeId, interface_id: id }, interfaceName(id)), 'deleted', metadata);
}

export interface SessionInput {
  spec: SessionSpec;
  peering_id: number | null;
  sort_order: number;
}

export function createSession(deps: FleetDeps, nodeId: string, input: SessionInput, metadata: EventMetadata): Promise<NodeWriteOutcome<number>> {
  const create = async (reserve: NodeWriteInput['reserve']) => {
    const [id] = await reserve('bgp_session');
    return { command: { type: 'CreateSession', node_id: nodeId, session: { id, ...input } } as const, what: sessionName(id, input.spec), result: id };
  };
  return writeChild(deps, nodeId, create, 'created', metadata);
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
    existing({ type: 'UpdateSession', node_id: nodeId, session_id: id, changes }, sessionName(id, changes.spec)),
    'updated',
    metadata,
  );
}

export function deleteSession(deps: FleetDeps, nodeId: string, id: number, metadata: EventMetadata): Promise<NodeWriteOutcome<void>> {
  return writeChild(deps, nodeId, existing({ type: 'DeleteSession', node_id: nodeId, session_id: id }, sessionName(id)), 'deleted', metadata);
}

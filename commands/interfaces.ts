import { decideNode, live, type ChildPatch } from '../domain/node/decide.js';
import type { InterfaceSpec, SessionSpec } from '../domain/node/specs.js';
import type { EventMetadata } from '../infra/eventstore/types.js';
import { writeNode, type FleetDeps, type NodeWriteOutcome } from './fleet-write.js';
import { nextIds } from './ids.js';

export interface InterfaceInput {
  spec: InterfaceSpec;
  peering_id: number | null;
  enabled: boolean;
  sort_order: number;
}

export async function createInterface(deps: FleetDeps, nodeId: string, input: InterfaceInput, metadata: EventMetadata): Promise<NodeWriteOutcome<number>> {
  const [id] = await nextIds(deps.db, 'interface');
  return writeNode(
    deps,
    nodeId,
    (state) => ({
      events: decideNode({ type: 'CreateInterface', node_id: nodeId, interface: { id, ...input } }, state),
      reason: `interface ${input.spec.name} created`,
      publish: 'always',
      result: id,
    }),
    metadata,
  );
}

export function updateInterface(
  deps: FleetDeps,
  nodeId: string,
  interfaceId: number,
  changes: ChildPatch<InterfaceSpec> & { enabled?: boolean },
  metadata: EventMetadata,
): Promise<NodeWriteOutcome<void>> {
  return writeNode(
    deps,
    nodeId,
    (state) => {
      const node = live(state, nodeId);
      const current = node.interfaces.find((i) => i.id === interfaceId);
      return {
        events: decideNode({ type: 'UpdateInterface', node_id: nodeId, interface_id: interfaceId, changes }, state),
        reason: `interface ${changes.spec?.name ?? current?.spec.name ?? interfaceId} updated`,
        publish: 'always',
        result: undefined,
      };
    },
    metadata,
  );
}

export function deleteInterface(deps: FleetDeps, nodeId: string, interfaceId: number, metadata: EventMetadata): Promise<NodeWriteOutcome<void>> {
  return writeNode(
    deps,
    nodeId,
    (state) => {
      const current = live(state, nodeId).interfaces.find((i) => i.id === interfaceId);
      return {
        events: decideNode({ type: 'DeleteInterface', node_id: nodeId, interface_id: interfaceId }, state),
        reason: `interface ${current?.spec.name ?? interfaceId} deleted`,
        publish: 'always',
        result: undefined,
      };
    },
    metadata,
  );
}

export interface SessionInput {
  spec: SessionSpec;
  peering_id: number | null;
  sort_order: number;
}

export async function createSession(deps: FleetDeps, nodeId: string, input: SessionInput, metadata: EventMetadata): Promise<NodeWriteOutcome<number>> {
  const [id] = await nextIds(deps.db, 'bgp_session');
  return writeNode(
    deps,
    nodeId,
    (state) => ({
      events: decideNode({ type: 'CreateSession', node_id: nodeId, session: { id, ...input } }, state),
      reason: `bgp session ${input.spec.name} created`,
      publish: 'always',
      result: id,
    }),
    metadata,
  );
}

export function updateSession(deps: FleetDeps, nodeId: string, sessionId: number, changes: ChildPatch<SessionSpec>, metadata: EventMetadata): Promise<NodeWriteOutcome<void>> {
  return writeNode(
    deps,
    nodeId,
    (state) => {
      const current = live(state, nodeId).sessions.find((s) => s.id === sessionId);
      return {
        events: decideNode({ type: 'UpdateSession', node_id: nodeId, session_id: sessionId, changes }, state),
        reason: `bgp session ${changes.spec?.name ?? current?.spec.name ?? sessionId} updated`,
        publish: 'always',
        result: undefined,
      };
    },
    metadata,
  );
}

export function deleteSession(deps: FleetDeps, nodeId: string, sessionId: number, metadata: EventMetadata): Promise<NodeWriteOutcome<void>> {
  return writeNode(
    deps,
    nodeId,
    (state) => {
      const current = live(state, nodeId).sessions.find((s) => s.id === sessionId);
      return {
        events: decideNode({ type: 'DeleteSession', node_id: nodeId, session_id: sessionId }, state),
        reason: `bgp session ${current?.spec.name ?? sessionId} deleted`,
        publish: 'always',
        result: undefined,
      };
    },
    metadata,
  );
}


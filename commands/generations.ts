import { desiredStateStream } from '../domain/desired-state/events.js';
import { MATERIALIZATION_FAILED, validateDesiredState } from '../domain/desired-state/schema.js';
import { NotFound, Validation } from '../domain/errors.js';
import { decideNode, live } from '../domain/node/decide.js';
import type { NodeFields, NodePatch } from '../domain/node/specs.js';
import type { EventMetadata } from '../infra/eventstore/types.js';
import { writeNode, type FleetDeps, type NodeWriteOutcome } from './fleet-write.js';

/** Re-publishes the snapshot of generation `target` as a new generation. */
export function rollbackGeneration(deps: FleetDeps, nodeId: string, target: number, metadata: EventMetadata): Promise<NodeWriteOutcome<number>> {
  return writeNode(
    deps,
    nodeId,
    async (state) => {
      live(state, nodeId);
      const [event] = target >= 1 ? await deps.store.readStream(desiredStateStream(nodeId), { fromVersion: target - 1 }) : [];
      if (!event || event.version !== target - 1) throw new NotFound(`node ${nodeId} has no generation ${target}`);
      const snapshot = (event.data as { state: Record<string, unknown> }).state;
      return { events: [], reason: `rollback to generation ${target}`, publish: 'none', document: snapshot, rollbackOf: target, result: target };
    },
    metadata,
  );
}

/** The identity fields a provisioned document carries for its node record. */
const IDENTITY_FIELDS = ['asn', 'router_id', 'site', 'loopback_ipv4', 'loopback_ipv6', 'link_local', 'ipv4_prefixes', 'ipv6_prefixes'] as const;

/**
 * `POST /provision`: stores a complete desired state as the node's next
 * generation. The node record is created from `state.node` when missing and its
 * identity fields follow the document otherwise, so the next materialisation
 * does not silently undo them.
 */
export function provisionState(deps: FleetDeps, document: Record<string, unknown>, metadata: EventMetadata): Promise<NodeWriteOutcome<string>> {
  const check = validateDesiredState(document);
  if (!check.ok) throw new Validation(MATERIALIZATION_FAILED, check.errors);
  const identity = document.node as Record<string, unknown>;
  const nodeId = identity.node_id as string;
  const fields: Record<string, unknown> = {};
  for (const key of IDENTITY_FIELDS) if (identity[key] !== undefined && identity[key] !== null) fields[key] = identity[key];
  return writeNode(
    deps,
    nodeId,
    (state) => {
      const events =
        state.status === 'Live'
          ? changedFields(state.fields as Record<string, unknown>, fields).length > 0
            ? decideNode({ type: 'UpdateNode', node_id: nodeId, changes: pick(fields, changedFields(state.fields as Record<string, unknown>, fields)) as NodePatch }, state)
            : []
          : decideNode({ type: 'CreateNode', node_id: nodeId, fields: fields as unknown as NodeFields }, state);
      return { events, reason: 'desired state provisioned', publish: 'none', document, topology: events.length > 0, result: nodeId };
    },
    metadata,
  );
}

function changedFields(current: Record<string, unknown>, next: Record<string, unknown>): string[] {
  return Object.keys(next).filter((k) => JSON.stringify(current[k]) !== JSON.stringify(next[k]));
}

function pick(source: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, source[k]]));
}

import { desiredStateStream } from '../domain/desired-state/events.js';
import { MATERIALIZATION_FAILED, validateDesiredState } from '../domain/desired-state/schema.js';
import { live, type NodeCommand } from '../domain/node/decide.js';
import type { NodeFields, NodePatch } from '../domain/node/specs.js';
import type { EventMetadata } from '../infra/eventstore/types.js';
import { agentTokenDecider, agentTokenStream, type AgentTokenEvent } from '../domain/agent/agent-token.js';
import { fold } from '../domain/decider.js';
import { IllegalState, NotFound, Validation } from '../domain/errors.js';
import type { FleetDeps, NodeWriteOutcome } from './fleet-write.js';
import { writeNode, type StreamEvents } from './node-write.js';
import type { LoadMore } from './handle.js';

/** Re-publishes the snapshot of generation `target` as a new generation. */
export function rollbackGeneration(deps: FleetDeps, nodeId: string, target: number, metadata: EventMetadata): Promise<NodeWriteOutcome<number>> {
  return writeNode(
    deps,
    nodeId,
    async ({ state }) => {
      live(state, nodeId);
      const [event] = target >= 1 ? await deps.store.readStream(desiredStateStream(nodeId), { fromVersion: target - 1 }) : [];
      if (!event || event.version !== target - 1) throw new NotFound(`node ${nodeId} has no generation ${target}`);
      const snapshot = (event.data as { state: Record<string, unknown> }).state;
      return { reason: `rollback to generation ${target}`, document: snapshot, rollbackOf: target, result: target };
    },
    metadata,
  );
}

/** The identity fields a provisioned document carries for its node record. */
const IDENTITY_FIELDS = ['asn', 'router_id', 'site', 'loopback_ipv4', 'loopback_ipv6', 'link_local', 'ipv4_prefixes', 'ipv6_prefixes'] as const;

/** A full agent token given to `POST /provision`: installed on the node beforehand, bound to it here. */
export interface ProvisionedToken {
  tokenId: string;
  secretSha256: string;
  now: Date;
}

/**
 * `POST /provision`: stores a complete desired state as the node's next
 * generation. The node record is created from `state.node` when missing and its
 * identity fields follow the document otherwise, so the next materialisation
 * does not silently undo them.
 */
export function provisionState(
  deps: FleetDeps,
  document: Record<string, unknown>,
  metadata: EventMetadata,
  agentToken?: ProvisionedToken,
): Promise<NodeWriteOutcome<string>> {
  const check = validateDesiredState(document);
  if (!check.ok) throw new Validation(MATERIALIZATION_FAILED, check.errors);
  const identity = document.node as Record<string, unknown>;
  const nodeId = identity.node_id as string;
  const fields: Record<string, unknown> = {};
  for (const key of IDENTITY_FIELDS) if (identity[key] !== undefined && identity[key] !== null) fields[key] = identity[key];
  return writeNode(
    deps,
    nodeId,
    async ({ state, more }) => {
      const also = agentToken ? await bindAgentToken(more, nodeId, agentToken) : [];
      const changed = state.status === 'Live' ? changedFields(state.fields as Record<string, unknown>, fields) : [];
      const commands: NodeCommand[] =
        state.status === 'Live'
          ? changed.length > 0
            ? [{ type: 'UpdateNode', node_id: nodeId, changes: pick(fields, changed) as NodePatch }]
            : []
          : [{ type: 'CreateNode', node_id: nodeId, fields: fields as unknown as NodeFields }];
      return { commands, reason: 'desired state provisioned', document, also, result: nodeId };
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

/**
 * The token's `AgentTokenIssued`, bound to the node without expiry. Provisioning
 * again with the same token is a repeat, not a conflict; a token id that exists
 * for another node or with another secret is 409 `agent token <id> already exists`.
 */
async function bindAgentToken(more: LoadMore, nodeId: string, token: ProvisionedToken): Promise<StreamEvents[]> {
  const streamId = agentTokenStream(token.tokenId);
  const stream = await more(streamId);
  const events = stream.events as AgentTokenEvent[];
  const state = fold(agentTokenDecider, events);
  if (state.status !== 'Empty') {
    const issued = events.find((e) => e.type === 'AgentTokenIssued');
    const same =
      state.status === 'Active' && state.node_id === nodeId && issued?.type === 'AgentTokenIssued' && issued.data.secret_sha256 === token.secretSha256;
    if (same) return [];
    throw new IllegalState(`agent token ${token.tokenId} already exists`);
  }
  const issue = agentTokenDecider.decide(
    { type: 'IssueAgentToken', node_id: nodeId, token_id: token.tokenId, secret_sha256: token.secretSha256, agent_id: null, ttl_seconds: null, now: token.now },
    state,
  );
  return [{ streamId, events: issue }];
}

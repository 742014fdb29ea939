import { live } from '../domain/node/decide.js';
import { mergeRouteTuning, type RouteTuningPatch } from '../domain/desired-state/route-tuning.js';
import { NotFound } from '../domain/errors.js';
import type { EventMetadata } from '../infra/eventstore/types.js';
import type { AnswerReader, FleetDeps, NodeWriteOutcome } from './fleet-write.js';
import { writeNode, type NodeWriteInput, type NodeWriteRequest } from './node-write.js';

/**
 * The console's route-tuning writes. Each merges into the node's stream as the
 * write found it (under the node's writer lock), so two helpers changing
 * different fields at the same time both land; a write that changes nothing
 * appends nothing and publishes nothing.
 */

/** Merges `cold_potato_med` / `route_local_pref` into `base_template.bird`; a published node gets a new generation when one changed. */
export function tuneRoutes<A = undefined>(
  deps: FleetDeps,
  nodeId: string,
  patch: RouteTuningPatch,
  metadata: EventMetadata,
  read?: AnswerReader<void, A>,
): Promise<NodeWriteOutcome<void, A>> {
  return writeNode(deps, nodeId, routeTuning(nodeId, patch), metadata, read);
}

/** Sets one session's `link_latency` (1 to 9; null clears) and nothing else of its specification. */
export function setLinkLatency<A = undefined>(
  deps: FleetDeps,
  nodeId: string,
  sessionId: number,
  linkLatency: number | null,
  metadata: EventMetadata,
  read?: AnswerReader<void, A>,
) {
  return writeNode(deps, nodeId, linkLatencyOf(nodeId, sessionId, linkLatency), metadata, read);
}

const routeTuning =
  (nodeId: string, patch: RouteTuningPatch) =>
  ({ state }: NodeWriteInput): NodeWriteRequest<void> => {
    const { template, changed } = mergeRouteTuning(live(state, nodeId).fields.base_template ?? {}, patch);
    // Route tuning is read by this node's materialisation only: no topology fan-out (`publicationsFor`).
    const commands = changed.length > 0 ? [{ type: 'UpdateNode' as const, node_id: nodeId, changes: { base_template: template } }] : [];
    return { commands, reason: `route tuning updated (${changed.join(', ')})`, result: undefined };
  };

const linkLatencyOf =
  (nodeId: string, sessionId: number, linkLatency: number | null) =>
  ({ state }: NodeWriteInput): NodeWriteRequest<void> => {
    const session = live(state, nodeId).sessions.find((s) => s.id === sessionId);
    // Deleted (or moved) since the caller looked its node up.
    if (!session) throw new NotFound(`unknown bgp session ${sessionId}`);
    const unchanged = (session.spec.link_latency ?? null) === linkLatency;
    const spec = { ...session.spec, link_latency: linkLatency };
    const commands = unchanged ? [] : [{ type: 'UpdateSession' as const, node_id: nodeId, session_id: sessionId, changes: { spec } }];
    return { commands, reason: `bgp session ${session.spec.name} updated (link_latency)`, result: undefined };
  };

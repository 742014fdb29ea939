import { evolveNode, type LiveNode } from '../../../domain/node/state.js';
import type { NodeEvent } from '../../../domain/node/events.js';
import { liveNode } from '../desired-state/fixtures.js';

export { iface, key, peering, session } from '../desired-state/fixtures.js';

/** A live node with the given id (the shared fixture is always fra1). */
export function nodeNamed(node_id: string, ...args: Parameters<typeof liveNode>): LiveNode {
  return { ...liveNode(...args), node_id };
}

/** The node after the events, as its stream would fold them. */
export function applied(node: LiveNode, events: readonly NodeEvent[]): LiveNode {
  return events.reduce(evolveNode, node) as LiveNode;
}

import { desiredStateStream } from '../domain/desired-state/events.js';
import { Conflict, NotFound } from '../domain/errors.js';
import { live } from '../domain/node/decide.js';
import type { Queryable } from '../infra/db/pool.js';
import type { EventMetadata } from '../infra/eventstore/types.js';
import { onlineAgentCount } from '../infra/agent-hub/presence.js';
import { getNode, type NodeOut } from '../projections/fleet/queries.js';
import type { FleetDeps } from './fleet-write.js';
import { writeNode } from './node-write.js';

/** The node, when an agent of it is connected to any instance: 404 `unknown node <id>`, else 409 `node <id> has no connected agent`. */
export async function connectedNode(db: Queryable, nodeId: string): Promise<NodeOut> {
  const node = await getNode(db, nodeId);
  if (!node) throw new NotFound(`unknown node ${nodeId}`);
  if ((await onlineAgentCount(db, nodeId)) === 0) throw new Conflict(`node ${nodeId} has no connected agent`);
  return node;
}

export type NotifyEvent = 'desired_state_updated' | 'snapshot_request';

export interface NotifyOutcome {
  node_id: string;
  event: NotifyEvent;
  generation: number;
  subscribers: number;
  delivered: number;
}

/**
 * `POST /admin/nodes/{node_id}/notify`. Refuses (409) before writing anything
 * when no agent of the node is connected to any instance. `desired_state_updated`
 * re-publishes the current desired state as a new generation (the doorbell rings
 * after commit, as for every publication); `snapshot_request` only rings.
 */
export async function notifyNode(
  deps: FleetDeps,
  nodeId: string,
  event: NotifyEvent,
  reason: string | undefined,
  metadata: EventMetadata,
): Promise<NotifyOutcome> {
  const node = await connectedNode(deps.db, nodeId);

  if (event === 'snapshot_request') {
    const [delivery] = await deps.doorbell.ring([{ type: 'snapshot_request', node_id: nodeId, ...(reason ? { reason } : {}) }]);
    return { node_id: nodeId, event, generation: node.current_generation, subscribers: delivery.subscribers, delivered: delivery.delivered };
  }
  const outcome = await writeNode(
    deps,
    nodeId,
    async ({ state, more }) => {
      live(state, nodeId);
      const { version } = await more(desiredStateStream(nodeId), 'version');
      const [current] = version >= 0 ? await deps.store.readStream(desiredStateStream(nodeId), { fromVersion: version }) : [];
      if (!current) throw new NotFound(`no desired state for node ${nodeId}`);
      const document = (current.data as { state: Record<string, unknown> }).state;
      return { reason: reason ?? 'notify', document, result: undefined };
    },
    metadata,
  );
  const published = outcome.published[0];
  const delivery = outcome.deliveries[0];
  return { node_id: nodeId, event, generation: published.generation, subscribers: delivery?.subscribers ?? 0, delivered: delivery?.delivered ?? 0 };
}

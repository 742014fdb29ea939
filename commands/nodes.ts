import { fold } from '../domain/decider.js';
import { desiredStateStream } from '../domain/desired-state/events.js';
import { dnsGroupDecider } from '../domain/dns/decide.js';
import { dnsGroupStream, type DnsGroupEvent } from '../domain/dns/events.js';
import { decideMembership, type MembershipChange } from '../domain/dns/membership.js';
import type { NodeCommand } from '../domain/node/decide.js';
import type { NodeEvent } from '../domain/node/events.js';
import type { NodeFields, NodePatch } from '../domain/node/specs.js';
import type { LiveNode } from '../domain/node/state.js';
import type { EventMetadata } from '../infra/eventstore/types.js';
import type { AnswerReader, FleetDeps, NodeWriteOutcome } from './fleet-write.js';
import { writeNode, type NodeWriteRequest } from './node-write.js';
import type { LoadMore } from './handle.js';
import { cancelRequestsOfPeerings } from './autopeering-cancel.js';

/** One command on one node, through the write pipeline (`writeNode`). */
function nodeCommand<A>(
  deps: FleetDeps,
  command: NodeCommand,
  reason: NodeWriteRequest<void>['reason'],
  metadata: EventMetadata,
  read?: AnswerReader<void, A>,
) {
  return writeNode(deps, command.node_id, () => ({ commands: [command], reason, result: undefined }), metadata, read);
}

export function createNode<A = undefined>(
  deps: FleetDeps,
  nodeId: string,
  fields: NodeFields,
  metadata: EventMetadata,
  read?: AnswerReader<void, A>,
): Promise<NodeWriteOutcome<void, A>> {
  return nodeCommand(deps, { type: 'CreateNode', node_id: nodeId, fields }, 'node created', metadata, read);
}

/**
 * A node PATCH. Only the fields that differ from their stored form are
 * recorded; a PATCH that changes nothing appends nothing and publishes nothing.
 */
export function updateNode<A = undefined>(
  deps: FleetDeps,
  nodeId: string,
  changes: NodePatch,
  metadata: EventMetadata,
  read?: AnswerReader<void, A>,
): Promise<NodeWriteOutcome<void, A>> {
  const reason = (events: readonly NodeEvent[]) =>
    `node updated (${events
      .flatMap((e) => (e.type === 'NodeUpdated' ? Object.keys(e.data.changes) : []))
      .sort()
      .join(', ')})`;
  return nodeCommand(deps, { type: 'UpdateNode', node_id: nodeId, changes }, reason, metadata, read);
}

export function decommissionNode<A = undefined>(deps: FleetDeps, nodeId: string, metadata: EventMetadata, read?: AnswerReader<void, A>) {
  return nodeCommand(deps, { type: 'DecommissionNode', node_id: nodeId }, 'node decommissioned', metadata, read);
}

export function recommissionNode<A = undefined>(deps: FleetDeps, nodeId: string, metadata: EventMetadata, read?: AnswerReader<void, A>) {
  return nodeCommand(deps, { type: 'RecommissionNode', node_id: nodeId }, 'node recommissioned', metadata, read);
}

/**
 * Deletes a node; a DNS group it still belongs to loses it in the same append
 * (`DnsGroupMemberLeft`), so the group's member list never names a node that no
 * longer exists (a node created again under the id starts outside every group).
 */
export function deleteNode(deps: FleetDeps, nodeId: string, metadata: EventMetadata): Promise<NodeWriteOutcome<void>> {
  return writeNode(
    deps,
    nodeId,
    async ({ state, more }) => {
      const generations = await more(desiredStateStream(nodeId), 'version');
      return {
        commands: [{ type: 'DeleteNode', node_id: nodeId, published: generations.version >= 0 }],
        reason: 'node deleted',
        // The node's peerings go with it: their portal requests are cancelled as an operator's removal.
        also: state.status === 'Live' ? [...(await leaveDnsGroup(state, more)), ...(await cancelRequestsOfPeerings(deps.db, more, nodeId, 'all'))] : [],
        result: undefined,
      };
    },
    metadata,
  );
}

/** The member event of the node's DNS group, if it has one, as writes of the same append (the group stream loaded through `more`). */
async function leaveDnsGroup(node: LiveNode, more: LoadMore): Promise<MembershipChange['groups']> {
  if (node.dns_group_id == null) return [];
  const group = fold(dnsGroupDecider, (await more(dnsGroupStream(node.dns_group_id))).events as DnsGroupEvent[]);
  return decideMembership(node, null, undefined, group).groups;
}

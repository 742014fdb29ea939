import { fold } from '../domain/decider.js';
import { desiredStateStream } from '../domain/desired-state/events.js';
import { dnsGroupDecider } from '../domain/dns/decide.js';
import { dnsGroupStream, type DnsGroupEvent } from '../domain/dns/events.js';
import { decideMembership, type MembershipChange } from '../domain/dns/membership.js';
import { decideNode } from '../domain/node/decide.js';
import type { NodeFields, NodePatch } from '../domain/node/specs.js';
import type { LiveNode } from '../domain/node/state.js';
import type { EventMetadata } from '../infra/eventstore/types.js';
import { writeNode, type AnswerReader, type FleetDeps, type NodeWriteOutcome } from './fleet-write.js';
import type { LoadMore } from './handle.js';
import { cancelRequestsOfPeerings } from './autopeering-cancel.js';

/** Fields other nodes materialise from; a change to one of them is a topology change. */
const FACT_FIELDS: readonly (keyof NodePatch)[] = ['asn', 'router_id', 'site', 'loopback_ipv4', 'loopback_ipv6', 'link_local', 'base_template'];

export function createNode<A = undefined>(
  deps: FleetDeps,
  nodeId: string,
  fields: NodeFields,
  metadata: EventMetadata,
  read?: AnswerReader<void, A>,
): Promise<NodeWriteOutcome<void, A>> {
  return writeNode(
    deps,
    nodeId,
    (state) => ({
      events: decideNode({ type: 'CreateNode', node_id: nodeId, fields }, state),
      reason: 'node created',
      publish: 'none',
      // A node that others already name in their topology appears there.
      topology: true,
      result: undefined,
    }),
    metadata,
    read,
  );
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
  return writeNode(
    deps,
    nodeId,
    (state) => {
      const events = decideNode({ type: 'UpdateNode', node_id: nodeId, changes }, state);
      const changed = events.flatMap((e) => (e.type === 'NodeUpdated' ? (Object.keys(e.data.changes) as (keyof NodePatch)[]) : []));
      return {
        events,
        reason: `node updated (${changed.sort().join(', ')})`,
        publish: events.length > 0 ? 'if-published' : 'none',
        topology: FACT_FIELDS.some((f) => changed.includes(f)),
        result: undefined,
      };
    },
    metadata,
    read,
  );
}

export function decommissionNode<A = undefined>(
  deps: FleetDeps,
  nodeId: string,
  metadata: EventMetadata,
  read?: AnswerReader<void, A>,
): Promise<NodeWriteOutcome<void, A>> {
  return writeNode(
    deps,
    nodeId,
    (state) => ({
      events: decideNode({ type: 'DecommissionNode', node_id: nodeId }, state),
      reason: 'node decommissioned',
      publish: 'empty',
      topology: true,
      result: undefined,
    }),
    metadata,
    read,
  );
}

export function recommissionNode<A = undefined>(
  deps: FleetDeps,
  nodeId: string,
  metadata: EventMetadata,
  read?: AnswerReader<void, A>,
): Promise<NodeWriteOutcome<void, A>> {
  return writeNode(
    deps,
    nodeId,
    (state) => ({
      events: decideNode({ type: 'RecommissionNode', node_id: nodeId }, state),
      reason: 'node recommissioned',
      publish: 'always',
      topology: true,
      result: undefined,
    }),
    metadata,
    read,
  );
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
    async (state, more) => {
      const generations = await more(desiredStateStream(nodeId), 'version');
      const events = decideNode({ type: 'DeleteNode', node_id: nodeId, published: generations.version >= 0 }, state);
      return {
        events,
        reason: 'node deleted',
        publish: 'none',
        topology: true,
        // The node's peerings go with it: their portal requests are cancelled as an operator's removal.
        alongside: state.status === 'Live' ? [...(await leaveDnsGroup(state, more)), ...(await cancelRequestsOfPeerings(deps.db, more, nodeId, 'all'))] : [],
        result: undefined,
      };
    },
    metadata,
  );
}

/** The member event of the node's DNS group, if it has one, as `alongside` writes (the group stream loaded through `more`). */
async function leaveDnsGroup(node: LiveNode, more: LoadMore): Promise<MembershipChange['groups']> {
  if (node.dns_group_id == null) return [];
  const group = fold(dnsGroupDecider, (await more(dnsGroupStream(node.dns_group_id))).events as DnsGroupEvent[]);
  return decideMembership(node, null, undefined, group).groups;
}

import type { DomainEvent } from '../decider.js';
import { BadReference } from '../errors.js';
import type { NodeEvent } from '../node/events.js';
import type { LiveNode } from '../node/state.js';
import { decideDnsGroup } from './decide.js';
import { dnsGroupStream } from './events.js';
import type { DnsGroupState } from './state.js';

/** What moving a node between DNS groups appends: the node's event and each group's member event. */
export interface MembershipChange {
  node: NodeEvent[];
  groups: { streamId: string; events: DomainEvent[] }[];
}

/**
 * `PUT /nodes/{id}/dns-group`: the node joins `target` (leaving its current
 * group) or leaves its group (`target` null). A group that does not exist is a
 * reference to a missing resource (400 `unknown dns group <id>`, like an unknown
 * `remote_node_id`); the same group again changes nothing.
 */
export function decideMembership(
  node: LiveNode,
  targetId: number | null,
  target: DnsGroupState | undefined,
  current: DnsGroupState | undefined,
): MembershipChange {
  if (targetId !== null && target?.status !== 'Active') throw new BadReference(`unknown dns group ${targetId}`);
  const currentId = node.dns_group_id ?? null;
  if (currentId === targetId) return { node: [], groups: [] };
  const groups: MembershipChange['groups'] = [];
  if (currentId !== null && current?.status === 'Active') {
    groups.push({ streamId: dnsGroupStream(currentId), events: decideDnsGroup({ type: 'LeaveGroup', group_id: currentId, node_id: node.node_id }, current) });
  }
  if (targetId !== null && target) {
    groups.push({ streamId: dnsGroupStream(targetId), events: decideDnsGroup({ type: 'JoinGroup', group_id: targetId, node_id: node.node_id }, target) });
  }
  return { node: [{ type: 'NodeDnsGroupAssigned', data: { node_id: node.node_id, dns_group_id: targetId } }], groups };
}

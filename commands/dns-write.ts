import { fold } from '../domain/decider.js';
import { dnsGroupDecider } from '../domain/dns/decide.js';
import { dnsGroupStream, type DnsGroupEvent } from '../domain/dns/events.js';
import type { DnsGroupState } from '../domain/dns/state.js';
import { nodeDecider } from '../domain/node/decide.js';
import { nodeStream, type NodeEvent } from '../domain/node/events.js';
import type { LiveNode, NodeState } from '../domain/node/state.js';
import type { EventMetadata } from '../infra/eventstore/types.js';
import { FleetLoader, publishAll, type FleetDeps, type NodeWriteOutcome, type PublicationTarget, type Published } from './fleet-write.js';
import { execute, type Decision, type LoadMore } from './handle.js';
import { afterCommit, guardedLoads, publishingLocks, type StreamEvents } from './node-write.js';

/**
 * What a write to one DNS group decides.
 *
 * - `dissolve`: the group is deleted; every member gets `NodeDnsGroupAssigned`
 *   null in its own stream and publishes without DNS.
 * - `also`: other streams written in the same append (group name claims);
 *   the plan loads each through `more` first, so the append checks its version.
 */
export interface GroupPlan<T> {
  events: DnsGroupEvent[];
  reason: string;
  dissolve?: boolean;
  also?: readonly StreamEvents[];
  result: T;
}

/**
 * One write to a DNS group and the desired states it changes, in one append:
 * the group's events, a new generation for every active, already published
 * member (materialised from the group as decided), the members' own events on a
 * delete, and guards on every node stream read; then the doorbell after commit.
 *
 * Members come from the group's stream and are confirmed by each node's stream
 * (`dns_group_id`), so a stale entry (a node deleted while a member) is skipped.
 * A concurrent join appends to this group's stream too, so it cannot slip
 * between this decision's read and its append.
 */
export async function writeDnsGroup<T>(
  deps: FleetDeps,
  groupId: number,
  plan: (group: DnsGroupState, more: LoadMore) => Promise<GroupPlan<T>> | GroupPlan<T>,
  metadata: EventMetadata,
): Promise<NodeWriteOutcome<T>> {
  const primary = dnsGroupStream(groupId);
  const executed = await execute(
    deps.store,
    [primary],
    async (streams, load) => {
      const { more, guards } = guardedLoads(load);
      const before = fold(dnsGroupDecider, streams[primary].events as DnsGroupEvent[]);
      const decided = await plan(before, more);
      const after = decided.events.reduce(dnsGroupDecider.evolve, before);
      const writes: Decision['writes'] = [{ streamId: primary, events: decided.events }, ...(decided.also ?? [])];
      if (decided.events.length === 0) return { writes: guards(writes), result: { result: decided.result, published: [] as Published[] } };

      const members = await confirmedMembers(more, groupId, before);
      const nodeEvents = new Map<string, NodeEvent[]>();
      const decidedNodes = new Map<string, NodeState>();
      for (const member of members) {
        const events: NodeEvent[] = decided.dissolve ? [{ type: 'NodeDnsGroupAssigned', data: { node_id: member.node_id, dns_group_id: null } }] : [];
        nodeEvents.set(member.node_id, events);
        decidedNodes.set(member.node_id, events.reduce(nodeDecider.evolve, member as NodeState));
      }
      const loader = new FleetLoader(deps.db, more, decidedNodes);
      loader.dnsGroups.set(groupId, after.status === 'Active' ? after : null);
      await loader.prefetch([...decidedNodes.keys()]);
      const targets: PublicationTarget[] = [];
      for (const [nodeId, state] of decidedNodes) {
        if (state.status === 'Live' && state.lifecycle === 'active' && (await loader.generation(nodeId)) > 0) targets.push({ node: state });
      }
      const publications = await publishAll(loader, targets, decided.reason);
      writes.push(...publications.writes);
      for (const [nodeId, events] of nodeEvents) if (events.length) writes.push({ streamId: nodeStream(nodeId), events });
      return { writes: guards(writes), result: { result: decided.result, published: publications.published } };
    },
    metadata,
    { locks: publishingLocks([primary]) },
  );
  return afterCommit(deps, executed);
}

/** The group's members whose own stream still names the group, in node id order. */
async function confirmedMembers(more: LoadMore, groupId: number, group: DnsGroupState): Promise<LiveNode[]> {
  const out: LiveNode[] = [];
  // Every member's state in one read of the events after its last fold.
  for (const { state } of await more.folded((group.status === 'Active' ? group.members : []).map(nodeStream), nodeDecider)) {
    if (state.status === 'Live' && state.dns_group_id === groupId) out.push(state);
  }
  return out;
}

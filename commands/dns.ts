import { fold } from '../domain/decider.js';
import { activeGroup, decideDnsGroup, dnsGroupDecider, zoneOf, type DnsGroupCommand } from '../domain/dns/decide.js';
import { dnsGroupStream, type DnsGroupEvent } from '../domain/dns/events.js';
import { decideMembership } from '../domain/dns/membership.js';
import { claimName, dnsGroupNameStream, releaseName, type DnsGroupNameEvent } from '../domain/dns/name-claim.js';
import {
  groupFieldsOf,
  recordFieldsOf,
  zoneFieldsOf,
  type DnsGroupIn,
  type DnsGroupPatch,
  type DnsRecordIn,
  type DnsRecordPatch,
  type DnsZoneIn,
  type DnsZonePatch,
} from '../domain/dns/specs.js';
import type { DnsGroupState } from '../domain/dns/state.js';
import { live } from '../domain/node/decide.js';
import type { EventMetadata } from '../infra/eventstore/types.js';
import { nextDnsId } from './dns-ids.js';
import { writeDnsGroup, type GroupPlan } from './dns-write.js';
import type { FleetDeps, NodeWriteOutcome } from './fleet-write.js';
import { writeNode } from './node-write.js';
import type { LoadMore } from './handle.js';

/**
 * DNS groups, zones and records: each write is one `writeDnsGroup` (the group's
 * events plus a new generation for every member), and `assignDnsGroup` is one
 * `writeNode` (the node's membership, the groups' member events, its generation).
 */

const nameEvents = async (more: LoadMore, name: string) => (await more(dnsGroupNameStream(name))).events as DnsGroupNameEvent[];

/** One group command on the group's state, as a plan. */
function command<T>(state: DnsGroupState, cmd: DnsGroupCommand, reason: string, result: T): GroupPlan<T> {
  return { events: decideDnsGroup(cmd, state), reason, result };
}

export async function createDnsGroup(deps: FleetDeps, input: DnsGroupIn, metadata: EventMetadata): Promise<NodeWriteOutcome<number>> {
  const groupId = await nextDnsId(deps.db, 'group');
  const group = groupFieldsOf(input);
  return writeDnsGroup(
    deps,
    groupId,
    async (state, more) => ({
      ...command(state, { type: 'CreateGroup', group_id: groupId, group }, `dns group ${group.name} created`, groupId),
      also: [{ streamId: dnsGroupNameStream(group.name), events: claimName(await nameEvents(more, group.name), group.name, groupId) }],
    }),
    metadata,
  );
}

export function updateDnsGroup(deps: FleetDeps, groupId: number, changes: DnsGroupPatch, metadata: EventMetadata): Promise<NodeWriteOutcome<void>> {
  return writeDnsGroup(
    deps,
    groupId,
    async (state, more) => {
      const current = activeGroup(state, groupId);
      const renamed = changes.name !== undefined && changes.name !== current.name ? changes.name : undefined;
      const plan = command(state, { type: 'UpdateGroup', group_id: groupId, changes }, `dns group ${renamed ?? current.name} updated`, undefined);
      if (renamed === undefined) return plan;
      return {
        ...plan,
        also: [
          { streamId: dnsGroupNameStream(renamed), events: claimName(await nameEvents(more, renamed), renamed, groupId) },
          { streamId: dnsGroupNameStream(current.name), events: releaseName(await nameEvents(more, current.name), current.name, groupId) },
        ],
      };
    },
    metadata,
  );
}

export function deleteDnsGroup(deps: FleetDeps, groupId: number, metadata: EventMetadata): Promise<NodeWriteOutcome<void>> {
  return writeDnsGroup(
    deps,
    groupId,
    async (state, more) => {
      const current = activeGroup(state, groupId);
      return {
        ...command(state, { type: 'DeleteGroup', group_id: groupId }, `dns group ${current.name} deleted`, undefined),
        dissolve: true,
        also: [{ streamId: dnsGroupNameStream(current.name), events: releaseName(await nameEvents(more, current.name), current.name, groupId) }],
      };
    },
    metadata,
  );
}

export async function createDnsZone(deps: FleetDeps, groupId: number, input: DnsZoneIn, metadata: EventMetadata): Promise<NodeWriteOutcome<number>> {
  const zoneId = await nextDnsId(deps.db, 'zone');
  return writeDnsGroup(
    deps,
    groupId,
    (state) => command(state, { type: 'CreateZone', group_id: groupId, zone_id: zoneId, zone: zoneFieldsOf(input) }, `dns zone ${input.zone} created`, zoneId),
    metadata,
  );
}

export function updateDnsZone(
  deps: FleetDeps,
  groupId: number,
  zoneId: number,
  changes: DnsZonePatch,
  metadata: EventMetadata,
): Promise<NodeWriteOutcome<void>> {
  return writeDnsGroup(
    deps,
    groupId,
    (state) =>
      command(state, { type: 'UpdateZone', group_id: groupId, zone_id: zoneId, changes }, `dns zone ${zoneName(state, groupId, zoneId)} updated`, undefined),
    metadata,
  );
}

export function deleteDnsZone(deps: FleetDeps, groupId: number, zoneId: number, metadata: EventMetadata): Promise<NodeWriteOutcome<void>> {
  return writeDnsGroup(
    deps,
    groupId,
    (state) => command(state, { type: 'DeleteZone', group_id: groupId, zone_id: zoneId }, `dns zone ${zoneName(state, groupId, zoneId)} deleted`, undefined),
    metadata,
  );
}

export async function createDnsRecord(
  deps: FleetDeps,
  groupId: number,
  zoneId: number,
  input: DnsRecordIn,
  metadata: EventMetadata,
): Promise<NodeWriteOutcome<number>> {
  const recordId = await nextDnsId(deps.db, 'record');
  return writeDnsGroup(
    deps,
    groupId,
    (state) =>
      command(
        state,
        { type: 'CreateRecord', group_id: groupId, zone_id: zoneId, record_id: recordId, record: recordFieldsOf(input) },
        `dns record ${input.name} ${input.type} created in ${zoneName(state, groupId, zoneId)}`,
        recordId,
      ),
    metadata,
  );
}

export function updateDnsRecord(
  deps: FleetDeps,
  groupId: number,
  zoneId: number,
  recordId: number,
  changes: DnsRecordPatch,
  metadata: EventMetadata,
): Promise<NodeWriteOutcome<void>> {
  return writeDnsGroup(
    deps,
    groupId,
    (state) =>
      command(
        state,
        { type: 'UpdateRecord', group_id: groupId, zone_id: zoneId, record_id: recordId, changes },
        `dns record ${recordId} updated in ${zoneName(state, groupId, zoneId)}`,
        undefined,
      ),
    metadata,
  );
}

export function deleteDnsRecord(deps: FleetDeps, groupId: number, zoneId: number, recordId: number, metadata: EventMetadata): Promise<NodeWriteOutcome<void>> {
  return writeDnsGroup(
    deps,
    groupId,
    (state) =>
      command(
        state,
        { type: 'DeleteRecord', group_id: groupId, zone_id: zoneId, record_id: recordId },
        `dns record ${recordId} deleted in ${zoneName(state, groupId, zoneId)}`,
        undefined,
      ),
    metadata,
  );
}

/** The zone's name for a generation's reason; unknown ids throw the contract's 404 first. */
function zoneName(state: DnsGroupState, groupId: number, zoneId: number): string {
  return zoneOf(activeGroup(state, groupId), zoneId).zone;
}

/**
 * `PUT /nodes/{id}/dns-group`: the node's membership, the member events of the
 * group it leaves and the group it joins, and the node's new generation (when
 * active), in one append.
 */
export function assignDnsGroup(deps: FleetDeps, nodeId: string, groupId: number | null, metadata: EventMetadata): Promise<NodeWriteOutcome<void>> {
  return writeNode(
    deps,
    nodeId,
    async ({ state, more }) => {
      const node = live(state, nodeId);
      const group = async (id: number | null | undefined) =>
        id == null ? undefined : fold(dnsGroupDecider, (await more(dnsGroupStream(id))).events as DnsGroupEvent[]);
      const target = await group(groupId);
      const change = decideMembership(node, groupId, target, await group(node.dns_group_id));
      const name = target?.status === 'Active' ? target.name : undefined;
      return {
        events: change.node,
        reason: name ? `joined dns group ${name}` : 'left its dns group',
        also: change.groups,
        result: undefined,
      };
    },
    metadata,
  );
}

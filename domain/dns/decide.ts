import { isDeepStrictEqual } from 'node:util';
import { unreachable, type Decider } from '../decider.js';
import { Conflict, NotFound, Validation } from '../errors.js';
import { servedNames } from './desired-state.js';
import type { DnsGroupEvent, GroupFields, RecordFields, ZoneFields, ZoneSerial } from './events.js';
import { checkRecordNames, recordNameErrors } from './check-names.js';
import { checkGroupFields, checkZoneFields } from './fields.js';
import { nameServerAddresses } from './name-servers.js';
import { checkRecordContent, checkRecordName, type RecordType } from './records.js';
import { evolveDnsGroup, initialDnsGroupState, type ActiveDnsGroup, type DnsGroupState, type DnsRecord, type DnsZone } from './state.js';

/**
 * Commands on one DNS group stream. Ids come from PostgreSQL sequences and arrive
 * in the command; defaults are filled by the command layer (`specs.ts`). Group
 * name uniqueness spans streams and is decided by `name-claim.ts`.
 *
 * An update carries only the fields whose stored form changes, and one that
 * changes nothing (an empty PATCH, or every field as it is) decides no event:
 * no serial step, no generation for the members, no doorbell.
 */
export type DnsGroupCommand =
  | { type: 'CreateGroup'; group_id: number; group: GroupFields }
  | { type: 'UpdateGroup'; group_id: number; changes: Partial<GroupFields> }
  | { type: 'DeleteGroup'; group_id: number }
  | { type: 'CreateZone'; group_id: number; zone_id: number; zone: ZoneFields }
  | { type: 'UpdateZone'; group_id: number; zone_id: number; changes: Partial<ZoneFields> }
  | { type: 'DeleteZone'; group_id: number; zone_id: number }
  | { type: 'CreateRecord'; group_id: number; zone_id: number; record_id: number; record: RecordFields }
  | { type: 'UpdateRecord'; group_id: number; zone_id: number; record_id: number; changes: Partial<RecordFields> }
  | { type: 'DeleteRecord'; group_id: number; zone_id: number; record_id: number }
  | { type: 'JoinGroup'; group_id: number; node_id: string }
  | { type: 'LeaveGroup'; group_id: number; node_id: string };

export function decideDnsGroup(command: DnsGroupCommand, state: DnsGroupState): DnsGroupEvent[] {
  const group_id = command.group_id;
  if (command.type === 'CreateGroup') {
    if (state.status !== 'Empty') throw new Conflict(`dns group ${group_id} already exists`);
    return [{ type: 'DnsGroupCreated', data: { group_id, group: checkGroupFields(command.group) } }];
  }
  const group = activeGroup(state, group_id);
  switch (command.type) {
    case 'UpdateGroup': {
      const changes = changedFields(group, checkGroupFields(command.changes));
      if (!changes) return [];
      const serials = changes.bind_addresses ? serialsMovedBy(group, changes.bind_addresses) : [];
      return [{ type: 'DnsGroupUpdated', data: { group_id, changes, ...(serials.length > 0 ? { serials } : {}) } }];
    }
    case 'DeleteGroup':
      return [{ type: 'DnsGroupDeleted', data: { group_id } }];
    case 'CreateZone': {
      const zone = checkZoneFields(command.zone);
      rejectDuplicateZone(group, zone.zone);
      return [{ type: 'DnsZoneCreated', data: { group_id, zone_id: command.zone_id, zone, serial: (group.serials[zone.zone] ?? 0) + 1 } }];
    }
    case 'UpdateZone': {
      const current = zoneOf(group, command.zone_id);
      const changes = changedFields(current, checkZoneFields(command.changes));
      if (!changes) return [];
      const name = changes.zone ?? current.zone;
      if (name !== current.zone) {
        rejectDuplicateZone(group, name);
        rejectRecordsBindRefusesUnder(current, name);
      }
      return [{ type: 'DnsZoneUpdated', data: { group_id, zone_id: current.id, changes, serial: Math.max(current.serial, group.serials[name] ?? 0) + 1 } }];
    }
    case 'DeleteZone':
      return [{ type: 'DnsZoneDeleted', data: { group_id, zone_id: zoneOf(group, command.zone_id).id } }];
    case 'CreateRecord': {
      const zone = zoneOf(group, command.zone_id);
      const record = checkRecord(command.record);
      checkRecordNames(zone.zone, record);
      rejectCnameConflict(zone, { id: command.record_id, ...record });
      return [{ type: 'DnsRecordCreated', data: { group_id, zone_id: zone.id, record_id: command.record_id, record, serial: zone.serial + 1 } }];
    }
    case 'UpdateRecord': {
      const zone = zoneOf(group, command.zone_id);
      const current = recordOf(zone, command.record_id);
      const next = { ...current, ...command.changes };
      const checked = checkRecord(next);
      checkRecordNames(zone.zone, checked);
      rejectCnameConflict(zone, { ...checked, id: current.id });
      // The stored form of the content (canonical), whenever the content or the type it is read as changes.
      const changes = changedFields(
        current,
        command.changes.content !== undefined || command.changes.type !== undefined ? { ...command.changes, content: checked.content } : command.changes,
      );
      if (!changes) return [];
      return [{ type: 'DnsRecordUpdated', data: { group_id, zone_id: zone.id, record_id: current.id, changes, serial: zone.serial + 1 } }];
    }
    case 'DeleteRecord': {
      const zone = zoneOf(group, command.zone_id);
      return [{ type: 'DnsRecordDeleted', data: { group_id, zone_id: zone.id, record_id: recordOf(zone, command.record_id).id, serial: zone.serial + 1 } }];
    }
    case 'JoinGroup':
      return group.members.includes(command.node_id) ? [] : [{ type: 'DnsGroupMemberJoined', data: { group_id, node_id: command.node_id } }];
    case 'LeaveGroup':
      return group.members.includes(command.node_id) ? [{ type: 'DnsGroupMemberLeft', data: { group_id, node_id: command.node_id } }] : [];
    default:
      return unreachable(command);
  }
}

export const dnsGroupDecider: Decider<DnsGroupCommand, DnsGroupEvent, DnsGroupState> = {
  initialState: initialDnsGroupState,
  evolve: evolveDnsGroup,
  decide: decideDnsGroup,
};

export function activeGroup(state: DnsGroupState, groupId: number): ActiveDnsGroup {
  if (state.status !== 'Active') throw new NotFound(`unknown dns group ${groupId}`);
  return state;
}

export function zoneOf(group: ActiveDnsGroup, zoneId: number): DnsZone {
  const zone = group.zones.find((z) => z.id === zoneId);
  if (!zone) throw new NotFound(`unknown dns zone ${zoneId}`);
  return zone;
}

export function recordOf(zone: DnsZone, recordId: number): DnsRecord {
  const record = zone.records.find((r) => r.id === recordId);
  if (!record) throw new NotFound(`unknown dns record ${recordId}`);
  return record;
}

/**
 * New serials of the zones whose served content changes with the bind
 * addresses: an in-zone name server without an address record is given them
 * (or the zone is left out without any), and a zone's serial must move
 * whenever its content does.
 */
function serialsMovedBy(group: ActiveDnsGroup, bindAddresses: readonly string[]): ZoneSerial[] {
  return group.zones
    .filter((z) => !isDeepStrictEqual(nameServerAddresses(servedNames(z), group.bind_addresses), nameServerAddresses(servedNames(z), bindAddresses)))
    .map((z) => ({ zone_id: z.id, serial: Math.max(z.serial, group.serials[z.zone] ?? 0) + 1 }));
}

/** The given fields whose value differs from the current one; undefined when none does. */
function changedFields<T extends object>(current: T, changes: Partial<T>): Partial<T> | undefined {
  const changed = Object.entries(changes).filter(([key, value]) => value !== undefined && !isDeepStrictEqual(value, current[key as keyof T]));
  return changed.length > 0 ? (Object.fromEntries(changed) as Partial<T>) : undefined;
}

function rejectDuplicateZone(group: ActiveDnsGroup, zone: string): void {
  if (group.zones.some((z) => z.zone === zone)) throw new Conflict(`dns zone ${zone} already exists in group ${group.group_id}`);
}

/** A zone renamed keeps its relative names: 422 when one of its records would break BIND's `check-names` under the new name. */
function rejectRecordsBindRefusesUnder(zone: DnsZone, name: string): void {
  const errors = zone.records.flatMap((r) =>
    recordNameErrors(name, r).map((e) => ({ ...e, loc: ['body', 'zone'], msg: `record ${r.id} (${r.name} ${r.type}): ${e.msg}` })),
  );
  if (errors.length > 0) throw new Validation('invalid zone name', errors);
}

function checkRecord<T extends RecordFields>(record: T): T {
  checkRecordName(record.name);
  return { ...record, content: checkRecordContent(record.type as RecordType, record.content) };
}

/**
 * A CNAME owns its name alone (RFC 1034 3.6.2): among enabled records, a name
 * with a CNAME has no other record, and the apex (which holds SOA and NS) has
 * none. BIND refuses such a zone, so the agent could not load it.
 */
function rejectCnameConflict(zone: DnsZone, record: DnsRecord): void {
  if (!record.enabled) return;
  const name = record.name.toLowerCase();
  if (record.type === 'CNAME' && name === '@') throw new Conflict(`a CNAME cannot be at the apex of zone ${zone.zone}`);
  const others = zone.records.filter((r) => r.id !== record.id && r.enabled && r.name.toLowerCase() === name);
  if (others.length > 0 && (record.type === 'CNAME' || others.some((r) => r.type === 'CNAME'))) {
    throw new Conflict(`dns record ${record.name} in zone ${zone.zone}: a CNAME cannot share its name with other records`);
  }
}

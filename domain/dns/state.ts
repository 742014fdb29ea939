import { unreachable } from '../decider.js';
import type { DnsGroupEvent, GroupFields, RecordFields, ZoneFields } from './events.js';

export interface DnsRecord extends RecordFields {
  id: number;
}

export interface DnsZone extends ZoneFields {
  id: number;
  /** The zone's SOA serial: a counter bumped by every write to the zone or its records. */
  serial: number;
  /** In id order; `materialise` orders them by (sort_order, id). */
  records: DnsRecord[];
}

/** A group as its stream tells it. */
export interface ActiveDnsGroup extends GroupFields {
  status: 'Active';
  group_id: number;
  /** In id order. */
  zones: DnsZone[];
  /** Nodes that joined and have not left, sorted. A node's own stream has the final word (see events.ts). */
  members: string[];
  /**
   * The highest SOA serial ever given to each zone name in this group, kept after
   * a zone is deleted, so a zone created again under the same name continues its
   * serial instead of going backwards.
   */
  serials: Record<string, number>;
}

export type DnsGroupState = { status: 'Empty' } | { status: 'Deleted'; group_id: number } | ActiveDnsGroup;

export const initialDnsGroupState = (): DnsGroupState => ({ status: 'Empty' });

export function evolveDnsGroup(state: DnsGroupState, event: DnsGroupEvent): DnsGroupState {
  if (event.type === 'DnsGroupCreated') {
    return { status: 'Active', group_id: event.data.group_id, ...event.data.group, zones: [], members: [], serials: {} };
  }
  if (state.status !== 'Active') return state;
  switch (event.type) {
    case 'DnsGroupUpdated': {
      const updated = { ...state, ...event.data.changes };
      return (event.data.serials ?? []).reduce(
        (next, { zone_id, serial }) =>
          withSerial(
            mapZone(next, zone_id, (z) => ({ ...z, serial })),
            zone_id,
          ),
        updated,
      );
    }
    case 'DnsGroupDeleted':
      return { status: 'Deleted', group_id: state.group_id };
    case 'DnsZoneCreated':
      return withSerial(
        { ...state, zones: [...state.zones, { id: event.data.zone_id, ...event.data.zone, serial: event.data.serial, records: [] }] },
        event.data.zone_id,
      );
    case 'DnsZoneUpdated':
      return withSerial(
        mapZone(state, event.data.zone_id, (z) => ({ ...z, ...event.data.changes, serial: event.data.serial })),
        event.data.zone_id,
      );
    case 'DnsZoneDeleted':
      return { ...state, zones: state.zones.filter((z) => z.id !== event.data.zone_id) };
    case 'DnsRecordCreated': {
      const { record_id, record, serial } = event.data;
      return withSerial(
        mapZone(state, event.data.zone_id, (z) => ({ ...z, serial, records: [...z.records, { id: record_id, ...record }] })),
        event.data.zone_id,
      );
    }
    case 'DnsRecordUpdated': {
      const { record_id, changes, serial } = event.data;
      return withSerial(
        mapZone(state, event.data.zone_id, (z) => ({ ...z, serial, records: z.records.map((r) => (r.id === record_id ? { ...r, ...changes } : r)) })),
        event.data.zone_id,
      );
    }
    case 'DnsRecordDeleted': {
      const { record_id, serial } = event.data;
      return withSerial(
        mapZone(state, event.data.zone_id, (z) => ({ ...z, serial, records: z.records.filter((r) => r.id !== record_id) })),
        event.data.zone_id,
      );
    }
    case 'DnsGroupMemberJoined':
      return state.members.includes(event.data.node_id) ? state : { ...state, members: [...state.members, event.data.node_id].sort() };
    case 'DnsGroupMemberLeft':
      return { ...state, members: state.members.filter((m) => m !== event.data.node_id) };
    default:
      return unreachable(event);
  }
}

function mapZone(state: ActiveDnsGroup, zoneId: number, change: (zone: DnsZone) => DnsZone): ActiveDnsGroup {
  return { ...state, zones: state.zones.map((z) => (z.id === zoneId ? change(z) : z)) };
}

/** Records the zone's (new) serial as the high-water mark of its name. */
function withSerial(state: ActiveDnsGroup, zoneId: number): ActiveDnsGroup {
  const zone = state.zones.find((z) => z.id === zoneId);
  if (!zone) return state;
  return { ...state, serials: { ...state.serials, [zone.zone]: Math.max(state.serials[zone.zone] ?? 0, zone.serial) } };
}

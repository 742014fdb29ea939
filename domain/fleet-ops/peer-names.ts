import type { InterfaceRecord, NodeEvent, SessionRecord } from '../node/events.js';
import type { SessionSpec } from '../node/specs.js';
import type { LiveNode } from '../node/state.js';
import { noDetails, type NodeMigration, type OperationDetails } from './details.js';
import { interfaceName, peeringName, peeringStem, sessionNames } from './names.js';
import { orderRenames, type Rename } from './renames.js';

/**
 * `POST /fleet/normalize-peer-names` for one node: every peering, the first
 * interface of each peering and its sessions take the conventional names of
 * `names.ts`. References follow an interface's new name in the same write
 * (a session's `interface` and the `%zone` of its `neighbor_address`, a
 * template host's `interface`). A renamed peering without a `remote_label`
 * keeps its old name there, so a name an operator chose is not lost.
 *
 * Left alone and reported: records without a peering (the peering backfill
 * comes first), an internal peering without a remote node, further interfaces
 * of a peering, and renames whose name another record keeps.
 */
export function planPeerNames(node: LiveNode): NodeMigration {
  const node_id = node.node_id;
  const details = noDetails();
  const wanted = { peerings: new Map<number, string>(), interfaces: new Map<number, string>(), sessions: new Map<number, string>() };

  for (const p of node.peerings) {
    const stem = peeringStem(p);
    if (!stem) {
      details.skipped.push({ node_id, kind: 'peering', id: p.id, name: p.name, reason: 'internal peering without remote_node_id' });
      continue;
    }
    wanted.peerings.set(p.id, peeringName(stem));
    node.interfaces
      .filter((i) => i.peering_id === p.id)
      .sort(byOrderThenId)
      .forEach((i, n) => {
        if (n === 0) wanted.interfaces.set(i.id, interfaceName(stem));
        else
          details.skipped.push({
            node_id,
            kind: 'interface',
            id: i.id,
            name: i.spec.name,
            reason: `peering ${p.name} has several interfaces; only the first takes the conventional name`,
          });
      });
    const sessions = node.sessions.filter((s) => s.peering_id === p.id).sort(byOrderThenId);
    sessionNames(stem, sessions).forEach((name, n) => wanted.sessions.set(sessions[n].id, name));
  }
  for (const i of node.interfaces)
    if (i.peering_id === null) details.skipped.push({ node_id, kind: 'interface', id: i.id, name: i.spec.name, reason: NO_PEERING });
  for (const s of node.sessions)
    if (s.peering_id === null) details.skipped.push({ node_id, kind: 'bgp_session', id: s.id, name: s.spec.name, reason: NO_PEERING });

  const peerings = renamesOf('peering', new Map(node.peerings.map((p) => [p.id, p.name])), wanted.peerings, node_id, details);
  const interfaces = renamesOf('interface', new Map(node.interfaces.map((i) => [i.id, i.spec.name])), wanted.interfaces, node_id, details);
  const sessions = renamesOf('bgp_session', new Map(node.sessions.map((s) => [s.id, s.spec.name])), wanted.sessions, node_id, details);

  const events: NodeEvent[] = [];
  for (const r of peerings) {
    const label = node.peerings.find((p) => p.id === r.id)?.remote_label ?? null;
    const changes = label === null ? { name: r.to, remote_label: r.from } : { name: r.to };
    if (label === null) details.changes.push({ node_id, kind: 'peering', id: r.id, name: r.from, field: 'remote_label', from: null, to: r.from });
    events.push({ type: 'PeeringUpdated', data: { node_id, peering_id: r.id, changes } });
  }
  const ifaceRenames = new Map(interfaces.map((r) => [r.from, r.to]));
  for (const r of interfaces) {
    const record = node.interfaces.find((i) => i.id === r.id) as InterfaceRecord;
    events.push({ type: 'InterfaceUpdated', data: { node_id, interface_id: r.id, changes: { spec: { ...record.spec, name: r.to } } } });
  }
  const sessionRenames = new Map(sessions.map((r) => [r.id, r.to]));
  for (const s of node.sessions) {
    const spec = sessionSpecAfter(s, sessionRenames.get(s.id), ifaceRenames);
    if (spec === s.spec) continue;
    for (const field of ['interface', 'neighbor_address'] as const) {
      if (spec[field] !== s.spec[field])
        details.changes.push({ node_id, kind: 'bgp_session', id: s.id, name: s.spec.name, field: `spec.${field}`, from: s.spec[field], to: spec[field] });
    }
    events.push({ type: 'BgpSessionUpdated', data: { node_id, session_id: s.id, changes: { spec } } });
  }
  const template = templateAfter(node.fields.base_template, ifaceRenames);
  if (template) {
    details.changes.push({
      node_id,
      kind: 'node',
      id: null,
      name: node_id,
      field: 'base_template.bird.internal_topology.hosts',
      from: hostsOf(node.fields.base_template),
      to: hostsOf(template),
    });
    events.push({ type: 'NodeUpdated', data: { node_id, changes: { base_template: template } } });
  }
  return { events, details };
}

const NO_PEERING = 'no peering; run the peering backfill first';

const byOrderThenId = <T extends { sort_order: number; id: number }>(a: T, b: T) => a.sort_order - b.sort_order || a.id - b.id;

/** The renames of one namespace that can be applied, recording each one and each blocked one in `details`. */
function renamesOf(
  kind: 'peering' | 'interface' | 'bgp_session',
  current: Map<number, string>,
  wanted: Map<number, string>,
  node_id: string,
  details: OperationDetails,
): Rename[] {
  const { applied, blocked } = orderRenames(current, wanted);
  for (const r of applied) details.changes.push({ node_id, kind, id: r.id, name: r.from, field: 'name', from: r.from, to: r.to });
  for (const r of blocked) details.skipped.push({ node_id, kind, id: r.id, name: r.from, reason: `name ${r.to} is kept by another ${kind.replace('_', ' ')}` });
  return applied;
}

/** The session's spec with its new name and its interface references renamed; the same object when nothing changes. */
function sessionSpecAfter(session: SessionRecord, name: string | undefined, ifaceRenames: ReadonlyMap<string, string>): SessionSpec {
  let spec = session.spec;
  if (name !== undefined) spec = { ...spec, name };
  const iface = spec.interface ? ifaceRenames.get(spec.interface) : undefined;
  if (iface) spec = { ...spec, interface: iface };
  const zone = /^(.*)%([^%]+)$/.exec(spec.neighbor_address);
  const renamedZone = zone ? ifaceRenames.get(zone[2]) : undefined;
  if (zone && renamedZone) spec = { ...spec, neighbor_address: `${zone[1]}%${renamedZone}` };
  return spec;
}

const hostsOf = (template: unknown): { interface?: unknown }[] | undefined =>
  (template as { bird?: { internal_topology?: { hosts?: { interface?: unknown }[] } } } | undefined)?.bird?.internal_topology?.hosts;

/** The base template with hosts behind a renamed interface following it; undefined when none is. */
function templateAfter(template: Record<string, unknown> | undefined, ifaceRenames: ReadonlyMap<string, string>): Record<string, unknown> | undefined {
  const hosts = hostsOf(template);
  if (!Array.isArray(hosts) || !hosts.some((h) => typeof h.interface === 'string' && ifaceRenames.has(h.interface))) return undefined;
  const next = structuredClone(template) as { bird: { internal_topology: { hosts: { interface?: string }[] } } };
  for (const h of next.bird.internal_topology.hosts) if (h.interface && ifaceRenames.has(h.interface)) h.interface = ifaceRenames.get(h.interface);
  return next as unknown as Record<string, unknown>;
}

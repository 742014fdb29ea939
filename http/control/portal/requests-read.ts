import { capacityOf, type Capacity } from '../../../domain/autopeering/create.js';
import { displayedOf, liveOf, provisionOf, type Displayed, type PeeringParts, type ProvisionView } from '../../../domain/autopeering/view.js';
import type { NodeFields } from '../../../domain/node/specs.js';
import type { Queryable } from '../../../infra/db/pool.js';
import { probeResults } from '../../../infra/portal/probe-runs.js';
import { nodeStatus } from '../../../infra/telemetry/store.js';
import { adoptedPeeringIds, interfaceSpecsOf, nodeFactsNow, requestsOfAs } from '../../../projections/autopeering/portal-queries.js';
import { listPolicies } from '../../../projections/autopeering/queries.js';
import { listNodes, peeringsFull } from '../../../projections/fleet/queries.js';

/** The portal's reads: node offers and request rows, from the read models (no stream is read). */

const iso = (t: Date | string | null) => (t === null ? null : new Date(t).toISOString());

export interface NodeOffer extends Capacity {
  node_id: string;
  site: string | null;
  endpoint_host: string | null;
  region: string | null;
  country_code: string | null;
  description: string | null;
  bandwidth_mbps: number | null;
  monthly_quota_gb: number | null;
  notice: string | null;
  not_ready: string | null;
}

/**
 * Why a node open for peering cannot serve a peering yet, or null. Our node's
 * WireGuard public key comes from its agent when it registers (`POST
 * /agent/wireguard-keys`); without it no configuration for the peer's side can
 * be made, so the portal must not offer the node.
 */
export const NOT_READY_NO_WIREGUARD_KEY = "our node's WireGuard public key is not known yet: its agent has not registered";

/** Enabled, active nodes with their seats (`GET /autopeering/nodes`), ordered by node_id. Operator notes stay out. */
export async function nodeOffers(db: Queryable): Promise<NodeOffer[]> {
  const open = (await listPolicies(db)).filter((p) => p.policy.enabled);
  if (open.length === 0) return [];
  const nodes = new Map((await listNodes(db)).filter((n) => n.lifecycle === 'active').map((n) => [n.node_id, n]));
  const ids = open.map((p) => p.node_id).filter((id) => nodes.has(id));
  const rows = await interfaceSpecsOf(db, ids);
  return ids.map((id) => {
    const row = open.find((p) => p.node_id === id)!;
    const node = nodes.get(id)!;
    const p = row.policy;
    const interfaces = rows.filter((r) => r.node_id === id);
    return {
      node_id: id,
      site: node.site,
      endpoint_host: p.endpoint_host,
      ...capacityOf({ fields: { base_template: node.base_template as NodeFields['base_template'] }, interfaces }, p, row.provisioned),
      region: p.region,
      country_code: p.country_code,
      description: p.description,
      bandwidth_mbps: p.bandwidth_mbps,
      monthly_quota_gb: p.monthly_quota_gb,
      notice: p.notice,
      not_ready: node.wireguard_public_key ? null : NOT_READY_NO_WIREGUARD_KEY,
    };
  });
}

/** A row of `GET /autopeering/requests` (document 3): the request, or a manual external peering adopted under the AS. */
export interface PortalRequestRow extends Omit<Displayed, 'from_snapshot'> {
  /** Null for an adopted peering (no request exists; it is the operator's to change). */
  id: number | null;
  adopted: boolean;
  node_id: string;
  asn: number;
  status: 'provisioned' | 'cancelled';
  peering_id: number | null;
  cancelled_by: 'requester' | 'operator' | null;
  reject_reason: string | null;
  /** True when the peering is gone and the displayed fields come from the request's record (audit snapshot). */
  from_snapshot: boolean;
  provision: ProvisionView | null;
  created_at: string;
  updated_at: string;
}

async function peeringParts(db: Queryable, ids: readonly number[]): Promise<Map<number, PeeringParts & { created_at: string; updated_at: string }>> {
  const out = new Map<number, PeeringParts & { created_at: string; updated_at: string }>();
  for (const id of ids) {
    const [p] = await peeringsFull(db, { peeringId: id });
    if (!p) continue;
    out.set(id, {
      node_id: p.local_node_id,
      name: p.name,
      notes: p.notes,
      interfaces: p.interfaces.map((i) => ({ name: i.name, spec: i.spec })),
      sessions: p.bgp_sessions.map((s) => ({ name: s.name, spec: s.spec })),
      created_at: p.created_at,
      updated_at: p.updated_at,
    });
  }
  return out;
}

/**
 * The AS's requests newest first, then its manual external peerings that no
 * provisioned request owns (adopted, ordered by node and name). Displayed
 * fields come from the live peering; a cancelled request's peering is gone, so
 * its row shows the record.
 */
export async function portalRows(db: Queryable, asn: number, only?: number): Promise<PortalRequestRow[]> {
  const requests = await requestsOfAs(db, asn, only);
  const adoptedIds = only !== undefined ? [] : await adoptedPeeringIds(db, asn);
  const live = requests.filter((r) => r.status === 'provisioned').map((r) => r.peering_id);
  const parts = await peeringParts(db, [...live, ...adoptedIds]);
  const facts = await nodeFactsNow(db, [...new Set([...requests.map((r) => r.node_id), ...[...parts.values()].map((p) => p.node_id)])]);

  const rows: PortalRequestRow[] = requests.map((r) => {
    const peering = r.status === 'provisioned' ? (parts.get(r.peering_id) ?? null) : null;
    const shown = displayedOf(r.record, peering);
    return {
      id: Number(r.id),
      adopted: false,
      node_id: r.node_id,
      asn: Number(r.asn),
      status: r.status,
      peering_id: r.peering_id,
      cancelled_by: r.cancelled_by,
      reject_reason: r.reject_reason,
      ...shown,
      provision: provisionOf(r.record.provision, shown, facts.get(r.node_id) ?? null, peering),
      created_at: iso(r.created_at)!,
      updated_at: iso(r.updated_at)!,
    };
  });
  for (const id of adoptedIds) {
    const peering = parts.get(id);
    if (!peering) continue;
    const shown = displayedOf(null, peering);
    rows.push({
      id: null,
      adopted: true,
      node_id: peering.node_id,
      asn,
      status: 'provisioned',
      peering_id: id,
      cancelled_by: null,
      reject_reason: null,
      ...shown,
      provision: provisionOf(null, shown, facts.get(peering.node_id) ?? null, peering),
      created_at: peering.created_at,
      updated_at: peering.updated_at,
    });
  }
  return rows;
}

/** One request of the AS with `live` from its node's latest snapshot; undefined when unknown or another AS's. */
export async function portalDetail(db: Queryable, asn: number, id: number) {
  const [row] = await portalRows(db, asn, id);
  if (!row) return undefined;
  const status = row.status === 'provisioned' ? await nodeStatus(db, row.node_id) : undefined;
  // A snapshot the server received before the request existed shows what was there before (a deleted request's
  // session of the same name, created again): not this request's state, so `live` waits for the next one.
  const fresh = status?.snapshot && status.snapshot_received_at && status.snapshot_received_at.getTime() >= Date.parse(row.created_at) ? status.snapshot : null;
  const probes = await probeResults(db, id);
  const shown = <T extends object>(p: { result: T; probed_at: string } | null) => (p ? { ...p.result, probed_at: p.probed_at } : null);
  return {
    ...row,
    live: row.status === 'provisioned' ? liveOf(fresh, { ...row }) : null,
    mtu_probe: shown(probes.mtu),
    latency: shown(probes.latency),
  };
}

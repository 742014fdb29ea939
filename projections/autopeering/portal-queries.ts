import { DEFAULT_AUTOPEERING_POLICY, type AutopeeringPolicy } from '../../domain/autopeering/policy.js';
import type { RequestRecord } from '../../domain/autopeering/request.js';
import type { NodeFactsNow } from '../../domain/autopeering/view.js';
import type { InterfaceSpec, NodeFields } from '../../domain/node/specs.js';
import type { Queryable } from '../../infra/db/pool.js';

/**
 * The peering portal's reads of the read models (`http/control/portal/requests-read.ts`
 * composes them into its views): an AS's requests with their records, the
 * external peerings it may adopt, and the facts of our nodes that a peer's
 * configuration needs.
 */

/** A request row as stored: the record keeps what was requested and provisioned, shown once the peering is gone. */
export interface PortalRequestDbRow {
  id: string;
  node_id: string;
  asn: string;
  status: 'provisioned' | 'cancelled';
  peering_id: number;
  cancelled_by: 'requester' | 'operator' | null;
  reject_reason: string | null;
  record: RequestRecord;
  created_at: Date;
  updated_at: Date;
}

/** The AS's requests, newest first; only the one with id `only` when given. */
export async function requestsOfAs(db: Queryable, asn: number, only?: number): Promise<PortalRequestDbRow[]> {
  const { rows } = await db.query(`SELECT * FROM autopeering_requests WHERE asn = $1 AND ($2::bigint IS NULL OR id = $2) ORDER BY id DESC`, [
    asn,
    only ?? null,
  ]);
  return rows as PortalRequestDbRow[];
}

/** The AS's external peerings that no provisioned request owns (made by an operator), by node and name. */
export async function adoptedPeeringIds(db: Queryable, asn: number): Promise<number[]> {
  const { rows } = await db.query(
    `SELECT p.id FROM peerings p
     WHERE p.remote_asn = $1 AND NOT p.is_internal
       AND NOT EXISTS (SELECT 1 FROM autopeering_requests r WHERE r.peering_id = p.id AND r.status = 'provisioned')
     ORDER BY p.node_id, p.name`,
    [asn],
  );
  return rows.map((r: { id: number }) => r.id);
}

interface NodeRow {
  node_id: string;
  fields: NodeFields;
  wireguard_public_key: string | null;
  policy: AutopeeringPolicy | null;
}

/** Our side of each node's peerings as it is now: AS, link-local address, WireGuard key, the policy's endpoint host. */
export async function nodeFactsNow(db: Queryable, ids: readonly string[]): Promise<Map<string, NodeFactsNow>> {
  if (ids.length === 0) return new Map();
  const { rows } = await db.query(
    `SELECT n.node_id, n.fields, n.wireguard_public_key, p.policy FROM nodes n LEFT JOIN autopeering_policies p USING (node_id) WHERE n.node_id = ANY($1::text[])`,
    [ids],
  );
  return new Map(
    (rows as NodeRow[]).map((r) => [
      r.node_id,
      {
        asn: Number(r.fields.asn),
        link_local: r.fields.link_local ?? null,
        wireguard_public_key: r.wireguard_public_key,
        endpoint_host: { ...DEFAULT_AUTOPEERING_POLICY, ...(r.policy ?? {}) }.endpoint_host,
      },
    ]),
  );
}

/** The interfaces of the nodes (their specs), for the seats and ports a node still offers. */
export async function interfaceSpecsOf(db: Queryable, ids: readonly string[]): Promise<{ node_id: string; spec: InterfaceSpec }[]> {
  const { rows } = await db.query(`SELECT node_id, spec FROM interfaces WHERE node_id = ANY($1::text[])`, [ids]);
  return rows as { node_id: string; spec: InterfaceSpec }[];
}

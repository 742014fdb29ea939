import { DEFAULT_AUTOPEERING_POLICY, type AutopeeringPolicy } from '../../domain/autopeering/policy.js';
import type { CancelledBy, ProvisionedPeering, RequestedPeering, RequestRecord, RequestStatus, SessionForm } from '../../domain/autopeering/request.js';
import type { Queryable } from '../../infra/db/pool.js';

const iso = (t: Date | string | null) => (t === null ? null : new Date(t).toISOString());

/** A node's policy as the administration lists it. */
export interface PolicyRow {
  node_id: string;
  policy: AutopeeringPolicy;
  /** Requests of the node currently `provisioned` (seats taken through autopeering). */
  provisioned: number;
  /** When the policy was last set; null while the node has the defaults. */
  updated_at: string | null;
}

const POLICY_ROWS = `
  SELECT n.node_id, p.policy, p.updated_at, COALESCE(r.provisioned, 0)::int AS provisioned
  FROM nodes n
  LEFT JOIN autopeering_policies p USING (node_id)
  LEFT JOIN (SELECT node_id, count(*) AS provisioned FROM autopeering_requests WHERE status = 'provisioned' GROUP BY node_id) r USING (node_id)`;

function policyRow(r: Record<string, any>): PolicyRow {
  return { node_id: r.node_id, policy: { ...DEFAULT_AUTOPEERING_POLICY, ...(r.policy ?? {}) }, provisioned: r.provisioned, updated_at: iso(r.updated_at) };
}

/** Every node (ordered by node_id) with its policy, defaults where none was set. */
export async function listPolicies(db: Queryable): Promise<PolicyRow[]> {
  const { rows } = await db.query(`${POLICY_ROWS} ORDER BY n.node_id`);
  return rows.map(policyRow);
}

export async function getPolicy(db: Queryable, nodeId: string): Promise<PolicyRow | undefined> {
  const { rows } = await db.query(`${POLICY_ROWS} WHERE n.node_id = $1`, [nodeId]);
  return rows[0] ? policyRow(rows[0]) : undefined;
}

/** A request row for the audit list (and, later, the portal). */
export interface RequestRow {
  id: number;
  node_id: string;
  asn: number;
  mntner: string | null;
  status: RequestStatus;
  form: SessionForm;
  peering_id: number;
  cancelled_by: CancelledBy | null;
  reject_reason: string | null;
  requested: RequestedPeering;
  provision: ProvisionedPeering;
  created_at: string;
  updated_at: string;
}

function requestRow(r: Record<string, any>): RequestRow {
  const record = r.record as RequestRecord;
  return {
    id: Number(r.id),
    node_id: r.node_id,
    asn: Number(r.asn),
    mntner: r.mntner,
    status: r.status,
    form: r.form,
    peering_id: r.peering_id,
    cancelled_by: r.cancelled_by,
    reject_reason: r.reject_reason,
    requested: record.requested,
    provision: record.provision,
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at)!,
  };
}

export interface RequestFilter {
  status?: RequestStatus;
  asn?: number;
  nodeId?: string;
}

/** Requests newest first, optionally of one status, AS or node. */
export async function listRequests(db: Queryable, filter: RequestFilter = {}): Promise<RequestRow[]> {
  const { rows } = await db.query(
    `SELECT * FROM autopeering_requests
     WHERE ($1::text IS NULL OR status = $1) AND ($2::bigint IS NULL OR asn = $2) AND ($3::text IS NULL OR node_id = $3)
     ORDER BY id DESC`,
    [filter.status ?? null, filter.asn ?? null, filter.nodeId ?? null],
  );
  return rows.map(requestRow);
}

export async function getRequest(db: Queryable, id: number): Promise<RequestRow | undefined> {
  const { rows } = await db.query(`SELECT * FROM autopeering_requests WHERE id = $1`, [id]);
  return rows[0] ? requestRow(rows[0]) : undefined;
}

/** The provisioned request a peering belongs to, if any (an operator deleting the peering cancels it). */
export async function activeRequestOfPeering(db: Queryable, peeringId: number): Promise<RequestRow | undefined> {
  const { rows } = await db.query(`SELECT * FROM autopeering_requests WHERE peering_id = $1 AND status = 'provisioned'`, [peeringId]);
  return rows[0] ? requestRow(rows[0]) : undefined;
}

/** Requests of a node currently `provisioned` (the seats `max_sessions` caps). */
export async function provisionedCount(db: Queryable, nodeId: string): Promise<number> {
  const { rows } = await db.query(`SELECT count(*)::int AS n FROM autopeering_requests WHERE node_id = $1 AND status = 'provisioned'`, [nodeId]);
  return rows[0].n;
}

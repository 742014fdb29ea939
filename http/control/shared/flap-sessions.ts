import {
  compareIssues,
  issueClass,
  SESSION_FLAP,
  sessionHealth,
  sessionKind,
  type IssueClass,
  type SessionHealth,
  type SessionKind,
} from '../../../domain/flaps/session.js';
import { sessionScoreAt } from '../../../domain/flaps/readings.js';
import { NotFound } from '../../../domain/errors.js';
import type { RuntimeSnapshot } from '../../../domain/telemetry/reports.js';
import type { Queryable } from '../../../infra/db/pool.js';
import { allBgpProtocols, nodeStatus } from '../../../infra/telemetry/store.js';
import { listNodes } from '../../../projections/fleet/queries.js';
import { sessionFlapRecords, sessionTransitions, type SessionFlapRecord } from '../../../projections/session-flaps/queries.js';

/** `BgpSessionStatus` (document 3): the protocol as the latest snapshot shows it, its health and its flap score decayed to `now`. */
export interface SessionStatusRow {
  name: string;
  kind: SessionKind;
  state: string;
  health: SessionHealth;
  since: string | null;
  remote_asn: number | null;
  routes_imported: number | null;
  routes_exported: number | null;
  info: string | null;
  flapping: boolean;
  flap_score: number | null;
}

export interface SessionFlapRow extends SessionStatusRow {
  node_id: string;
  transitions_total: number;
  flaps_total: number;
  last_transition_at: string | null;
}

/** Null: no flap record of the session (none, or it never flapped); otherwise the stored score decayed to `now` (0 once decayed). */
export const scoreAt = (record: SessionFlapRecord | undefined, now: Date): number | null => sessionScoreAt(record, now);

function statusRow(p: RuntimeSnapshot['bgp_protocols'][number], record: SessionFlapRecord | undefined, now: Date): SessionStatusRow {
  const score = scoreAt(record, now);
  return {
    name: p.name,
    kind: sessionKind(p.name),
    state: p.state,
    health: sessionHealth(p.state),
    since: p.since ? new Date(p.since).toISOString() : null,
    remote_asn: p.remote_asn ?? null,
    routes_imported: p.routes_imported ?? null,
    routes_exported: p.routes_exported ?? null,
    info: p.info ?? null,
    flapping: score !== null && score >= SESSION_FLAP.listLine,
    flap_score: score,
  };
}

function flapRow(nodeId: string, p: RuntimeSnapshot['bgp_protocols'][number], record: SessionFlapRecord | undefined, now: Date): SessionFlapRow {
  return {
    ...statusRow(p, record, now),
    node_id: nodeId,
    transitions_total: record?.transitions_total ?? 0,
    flaps_total: record?.flaps_total ?? 0,
    last_transition_at: record?.last_transition_at ?? null,
  };
}

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** The node's latest snapshot, or the contract's 404. */
async function snapshotOr404(db: Queryable, nodeId: string): Promise<{ snapshot: RuntimeSnapshot; received: Date }> {
  const status = await nodeStatus(db, nodeId);
  if (!status?.snapshot || !status.snapshot_received_at) throw new NotFound(`no runtime status reported for node ${nodeId}`);
  return { snapshot: status.snapshot, received: status.snapshot_received_at };
}

/** `GET /ui/nodes/{id}/bgp-sessions/status`: every BGP protocol of the latest snapshot, eBGP and iBGP, by name. */
export async function nodeSessionStatus(db: Queryable, nodeId: string, now: Date) {
  const { snapshot, received } = await snapshotOr404(db, nodeId);
  const records = (await sessionFlapRecords(db, [nodeId])).get(nodeId);
  const sessions = snapshot.bgp_protocols.map((p) => statusRow(p, records?.get(p.name), now)).sort(byName);
  return { node_id: nodeId, captured_at: new Date(snapshot.captured_at).toISOString(), received_at: received.toISOString(), sessions };
}

/** `GET /ui/nodes/{id}/bgp-flaps`: the node's session flap rows by name and its transitions newest first. */
export async function nodeSessionFlaps(db: Queryable, nodeId: string, transitionsLimit: number, now: Date) {
  const { snapshot } = await snapshotOr404(db, nodeId);
  const [records, transitions] = await Promise.all([sessionFlapRecords(db, [nodeId]), sessionTransitions(db, nodeId, transitionsLimit)]);
  const mine = records.get(nodeId);
  const sessions = snapshot.bgp_protocols.map((p) => flapRow(nodeId, p, mine?.get(p.name), now)).sort(byName);
  return { node_id: nodeId, captured_at: new Date(snapshot.captured_at).toISOString(), sessions, transitions };
}

/**
 * Every session of every node's latest snapshot as a flap row. Decommissioned
 * and deleted nodes are left out (as the prefix level does): a decommissioned
 * node runs the empty state and a deleted one is gone. The reads run one after
 * the other, so `db` may be one transaction's client (the flap peers read it
 * with the prefix rows in one snapshot).
 */
export async function fleetSessionRows(db: Queryable, now: Date): Promise<SessionFlapRow[]> {
  const protocols = await allBgpProtocols(db);
  const records = await sessionFlapRecords(db, null);
  const nodes = await listNodes(db);
  const active = new Set(nodes.filter((n) => n.lifecycle !== 'decommissioned').map((n) => n.node_id));
  const rows: SessionFlapRow[] = [];
  for (const [nodeId, mine] of protocols) {
    if (!active.has(nodeId)) continue;
    for (const p of mine) rows.push(flapRow(nodeId, p, records.get(nodeId)?.get(p.name), now));
  }
  return rows;
}

/** `GET /ui/fleet/bgp-flaps`: session flap rows with a score at least `minScore`, by score descending (then node and name). */
export async function fleetSessionFlaps(db: Queryable, q: { min_score: number; limit: number }, now: Date) {
  const rows = (await fleetSessionRows(db, now)).filter((r) => r.flap_score !== null && r.flap_score >= q.min_score);
  rows.sort((a, b) => b.flap_score! - a.flap_score! || (a.node_id < b.node_id ? -1 : a.node_id > b.node_id ? 1 : 0) || byName(a, b));
  return { generated_at: now.toISOString(), min_score: q.min_score, sessions: rows.slice(0, q.limit) };
}

export interface PeeringIssue extends SessionFlapRow {
  issue: IssueClass;
}

/** `GET /ui/fleet/peering-issues` (and the dashboard's block): sessions not Established or flapping, in the contract's order. */
export async function peeringIssues(db: Queryable, now: Date): Promise<PeeringIssue[]> {
  const issues: PeeringIssue[] = [];
  for (const row of await fleetSessionRows(db, now)) {
    const issue = issueClass(row.health, row.flapping);
    if (issue) issues.push({ ...row, issue });
  }
  return issues.sort((a, b) => compareIssues({ ...a, class: a.issue }, { ...b, class: b.issue }));
}

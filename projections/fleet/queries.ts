import type { PeeringRecord } from '../../domain/node/events.js';
import { addressingOf, type InterfaceSpec, type NodeAddressing, type NodeFields, type SessionSpec } from '../../domain/node/specs.js';
import type { Queryable } from '../../infra/db/pool.js';

/** The read side of nodes, peerings, interfaces, sessions and generations, in the contract's shapes. */

export interface NodeOut extends NodeAddressing {
  node_id: string;
  ipv4_prefixes: string[];
  ipv6_prefixes: string[];
  inventory: Record<string, unknown>;
  labels: Record<string, unknown>;
  base_template: Record<string, unknown>;
  current_generation: number;
  lifecycle: string;
  dns_group_id: number | null;
  wireguard_public_key: string | null;
  created_at: string;
  updated_at: string;
}

const iso = (t: Date | string) => new Date(t).toISOString();

function nodeOut(r: Record<string, any>): NodeOut {
  const f = r.fields as NodeFields;
  return {
    node_id: r.node_id,
    ...addressingOf(f),
    ipv4_prefixes: f.ipv4_prefixes ?? [],
    ipv6_prefixes: f.ipv6_prefixes ?? [],
    inventory: f.inventory ?? {},
    labels: f.labels ?? {},
    base_template: f.base_template ?? {},
    current_generation: r.current_generation,
    lifecycle: r.lifecycle,
    dns_group_id: r.dns_group_id,
    wireguard_public_key: r.wireguard_public_key,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

export async function listNodes(db: Queryable): Promise<NodeOut[]> {
  const { rows } = await db.query(`SELECT * FROM nodes ORDER BY node_id`);
  return rows.map(nodeOut);
}

export async function getNode(db: Queryable, nodeId: string): Promise<NodeOut | undefined> {
  const { rows } = await db.query(`SELECT * FROM nodes WHERE node_id = $1`, [nodeId]);
  return rows[0] ? nodeOut(rows[0]) : undefined;
}

/** A peering record as the node stream holds it, plus its node and times. */
export interface PeeringOut extends PeeringRecord {
  local_node_id: string;
  created_at: string;
  updated_at: string;
}

function peeringOut(r: Record<string, any>): PeeringOut {
  return {
    id: r.id,
    local_node_id: r.node_id,
    name: r.name,
    remote_asn: Number(r.remote_asn),
    remote_node_id: r.remote_node_id,
    remote_label: r.remote_label,
    is_internal: r.is_internal,
    enabled: r.enabled,
    notes: r.notes,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

export async function listPeerings(db: Queryable, nodeId: string): Promise<PeeringOut[]> {
  const { rows } = await db.query(`SELECT * FROM peerings WHERE node_id = $1 ORDER BY name, id`, [nodeId]);
  return rows.map(peeringOut);
}

export async function getPeering(db: Queryable, id: number): Promise<PeeringOut | undefined> {
  const { rows } = await db.query(`SELECT * FROM peerings WHERE id = $1`, [id]);
  return rows[0] ? peeringOut(rows[0]) : undefined;
}

export interface InterfaceOut {
  id: number;
  node_id: string;
  peering_id: number | null;
  name: string;
  kind: string;
  enabled: boolean;
  sort_order: number;
  spec: InterfaceSpec;
}

function interfaceOut(r: Record<string, any>): InterfaceOut {
  return { id: r.id, node_id: r.node_id, peering_id: r.peering_id, name: r.name, kind: r.kind, enabled: r.enabled, sort_order: r.sort_order, spec: r.spec };
}

export async function listInterfaces(db: Queryable, nodeId: string): Promise<InterfaceOut[]> {
  const { rows } = await db.query(`SELECT * FROM interfaces WHERE node_id = $1 ORDER BY sort_order, id`, [nodeId]);
  return rows.map(interfaceOut);
}

export async function getInterface(db: Queryable, id: number): Promise<InterfaceOut | undefined> {
  const { rows } = await db.query(`SELECT * FROM interfaces WHERE id = $1`, [id]);
  return rows[0] ? interfaceOut(rows[0]) : undefined;
}

export interface SessionOut {
  id: number;
  node_id: string;
  peering_id: number | null;
  name: string;
  remote_asn: number;
  enabled: boolean;
  sort_order: number;
  spec: SessionSpec;
}

function sessionOut(r: Record<string, any>): SessionOut {
  return {
    id: r.id,
    node_id: r.node_id,
    peering_id: r.peering_id,
    name: r.name,
    remote_asn: Number(r.remote_asn),
    enabled: r.enabled,
    sort_order: r.sort_order,
    spec: r.spec,
  };
}

export async function listSessions(db: Queryable, nodeId: string): Promise<SessionOut[]> {
  const { rows } = await db.query(`SELECT * FROM bgp_sessions WHERE node_id = $1 ORDER BY sort_order, id`, [nodeId]);
  return rows.map(sessionOut);
}

export async function getSession(db: Queryable, id: number): Promise<SessionOut | undefined> {
  const { rows } = await db.query(`SELECT * FROM bgp_sessions WHERE id = $1`, [id]);
  return rows[0] ? sessionOut(rows[0]) : undefined;
}

export interface PeeringFull extends PeeringOut {
  interfaces: InterfaceOut[];
  bgp_sessions: SessionOut[];
}

/** Peerings with their interfaces and sessions (one node, or one peering). */
export async function peeringsFull(db: Queryable, where: { nodeId: string } | { peeringId: number }): Promise<PeeringFull[]> {
  const peerings = 'nodeId' in where ? await listPeerings(db, where.nodeId) : [await getPeering(db, where.peeringId)].filter((p): p is PeeringOut => !!p);
  if (peerings.length === 0) return [];
  const ids = peerings.map((p) => p.id);
  const ifaces = (await db.query(`SELECT * FROM interfaces WHERE peering_id = ANY($1::int[]) ORDER BY sort_order, id`, [ids])).rows.map(interfaceOut);
  const sessions = (await db.query(`SELECT * FROM bgp_sessions WHERE peering_id = ANY($1::int[]) ORDER BY sort_order, id`, [ids])).rows.map(sessionOut);
  return peerings.map((p) => ({ ...p, interfaces: ifaces.filter((i) => i.peering_id === p.id), bgp_sessions: sessions.filter((s) => s.peering_id === p.id) }));
}

/** Node ids by owner, for the per-id routes (`/peerings/{id}`, `/interfaces/{id}`, ...). */
export async function ownerOf(db: Queryable, kind: 'peering' | 'interface' | 'bgp_session', id: number): Promise<string | undefined> {
  const table = { peering: 'peerings', interface: 'interfaces', bgp_session: 'bgp_sessions' }[kind];
  const { rows } = await db.query(`SELECT node_id FROM ${table} WHERE id = $1`, [id]);
  return rows[0]?.node_id;
}

/** Nodes whose desired state depends on this node: internal peerings pointing at it, topology routers naming it. */
/** Other nodes with an internal peering (any, or only enabled ones) whose remote is `nodeId`, sorted. */
export async function nodesPeeringInternallyWith(db: Queryable, nodeId: string, options: { enabledOnly?: boolean } = {}): Promise<string[]> {
  const { rows } = await db.query(
    `SELECT DISTINCT node_id FROM peerings WHERE remote_node_id = $1 AND is_internal AND node_id <> $1${options.enabledOnly ? ' AND enabled' : ''} ORDER BY node_id`,
    [nodeId],
  );
  return rows.map((r: { node_id: string }) => r.node_id);
}

/** `nodesPeeringInternallyWith` for many nodes in one query: remote node id → peering nodes, sorted. */
export async function nodesPeeringInternallyWithAny(db: Queryable, nodeIds: readonly string[]): Promise<Map<string, string[]>> {
  const { rows } = await db.query(
    `SELECT DISTINCT remote_node_id, node_id FROM peerings WHERE remote_node_id = ANY($1::text[]) AND is_internal AND node_id <> remote_node_id ORDER BY remote_node_id, node_id`,
    [nodeIds],
  );
  const out = new Map<string, string[]>();
  for (const r of rows as { remote_node_id: string; node_id: string }[]) {
    if (!out.has(r.remote_node_id)) out.set(r.remote_node_id, []);
    out.get(r.remote_node_id)!.push(r.node_id);
  }
  return out;
}

export async function nodesReferring(db: Queryable, nodeId: string): Promise<string[]> {
  const { rows } = await db.query(
    `SELECT node_id FROM peerings WHERE remote_node_id = $1 AND is_internal AND node_id <> $1
     UNION
     SELECT node_id FROM nodes WHERE fields -> 'base_template' -> 'bird' -> 'internal_topology' -> 'routers' ? $1 AND node_id <> $1
     ORDER BY 1`,
    [nodeId],
  );
  return rows.map((r: { node_id: string }) => r.node_id);
}

export interface GenerationInfo {
  node_id: string;
  generation: number;
  reason: string;
  rollback_of: number | null;
  actor: string;
  created_at: string;
}

function generationInfo(r: Record<string, any>): GenerationInfo {
  return { node_id: r.node_id, generation: r.generation, reason: r.reason, rollback_of: r.rollback_of, actor: r.actor, created_at: iso(r.created_at) };
}

export async function listGenerations(db: Queryable, nodeId: string, limit: number): Promise<GenerationInfo[]> {
  const { rows } = await db.query(
    `SELECT node_id, generation, reason, rollback_of, actor, created_at FROM generations WHERE node_id = $1 ORDER BY generation DESC LIMIT $2`,
    [nodeId, limit],
  );
  return rows.map(generationInfo);
}

/**
 * A generation row's desired state: the row's own copy (rows written before fleet
 * migration 0003, or from a KurrentDB log), else the state in its
 * `DesiredStatePublished` event (the same jsonb, so the same text out).
 */
const stateOf = (g: string) => `COALESCE(${g}.state, (SELECT e.data -> 'state' FROM events e WHERE e.position = ${g}.event_position))`;
const GENERATION_COLUMNS = (g: string) => `${g}.node_id, ${g}.generation, ${g}.reason, ${g}.rollback_of, ${g}.actor, ${g}.created_at, ${stateOf(g)} AS state`;

export async function getGeneration(
  db: Queryable,
  nodeId: string,
  generation: number,
): Promise<(GenerationInfo & { state: Record<string, unknown> }) | undefined> {
  const { rows } = await db.query(`SELECT ${GENERATION_COLUMNS('g')} FROM generations g WHERE g.node_id = $1 AND g.generation = $2`, [nodeId, generation]);
  return rows[0] ? { ...generationInfo(rows[0]), state: rows[0].state } : undefined;
}

/** The newest generation, or the one in force at `at` (published at or before it). */
export async function generationAt(db: Queryable, nodeId: string, at?: Date): Promise<(GenerationInfo & { state: Record<string, unknown> }) | undefined> {
  const { rows } = await db.query(
    `SELECT ${GENERATION_COLUMNS('g')} FROM generations g WHERE g.node_id = $1 AND ($2::timestamptz IS NULL OR g.created_at <= $2)
     ORDER BY g.generation DESC LIMIT 1`,
    [nodeId, at ?? null],
  );
  return rows[0] ? { ...generationInfo(rows[0]), state: rows[0].state } : undefined;
}

/** The newest generation of a node as the agent route serves it: the state as PostgreSQL's JSON text, null when `known` is that generation. */
export interface PublishedHead {
  generation: number;
  reason: string;
  created_at: Date;
  /** `state` as JSON text (jsonb output), or null when the caller said it holds this generation. */
  state_json: string | null;
}

/**
 * Each wanted node's newest generation, for several requests in one read
 * (concurrent pulls after a fleet-wide write; one indexed probe per node). The
 * state comes as text (no parse and re-serialisation in this process), and
 * only when the generation differs from `known` (a conditional GET that will
 * probably be answered 304 reads no document). The answer at index i is for
 * `wanted[i]` (undefined when that node has no generation).
 */
export async function publishedHeads(db: Queryable, wanted: readonly { nodeId: string; known: number | null }[]): Promise<(PublishedHead | undefined)[]> {
  const { rows } = await db.query(
    `SELECT w.i, g.generation, g.reason, g.created_at, CASE WHEN g.generation = w.known THEN NULL ELSE ${stateOf('g')}::text END AS state_json
       FROM unnest($1::text[], $2::int[]) WITH ORDINALITY AS w(node_id, known, i)
       CROSS JOIN LATERAL (SELECT generation, reason, created_at, state, event_position FROM generations WHERE node_id = w.node_id ORDER BY generation DESC LIMIT 1) g`,
    [wanted.map((w) => w.nodeId), wanted.map((w) => w.known)],
  );
  const out: (PublishedHead | undefined)[] = new Array(wanted.length).fill(undefined);
  for (const { i, ...head } of rows as (PublishedHead & { i: string })[]) out[Number(i) - 1] = head;
  return out;
}

export interface HistoryEntry {
  position: string;
  type: string;
  recorded_at: string;
  actor: string;
  request_id: string | null;
  data: unknown;
}

/** Whether a node id ever had events (its history outlives a delete). */
export async function nodeHasHistory(db: Queryable, nodeId: string): Promise<boolean> {
  return (await db.query(`SELECT 1 FROM node_history WHERE node_id = $1 LIMIT 1`, [nodeId])).rows.length > 0;
}

/** A node's events, newest first; `before` is a position from an earlier page. */
export async function nodeHistory(db: Queryable, nodeId: string, limit: number, before?: { tx: bigint; pos: bigint }): Promise<HistoryEntry[]> {
  const { rows } = await db.query(
    `SELECT * FROM node_history WHERE node_id = $1 AND ($2::bigint IS NULL OR (tx, pos) < ($2::bigint, $3::bigint))
     ORDER BY tx DESC, pos DESC LIMIT $4`,
    [nodeId, before?.tx.toString() ?? null, before?.pos.toString() ?? null, limit],
  );
  return rows.map((r: Record<string, any>) => ({
    position: `${r.tx}/${r.pos}`,
    type: r.type,
    recorded_at: iso(r.recorded_at),
    actor: r.actor,
    request_id: r.request_id,
    data: r.data,
  }));
}

/** Internal WireGuard adjacencies of every node's current generation (`bird.internal_topology.adjacencies`), by node id. */
export async function publishedAdjacencies(db: Queryable): Promise<Map<string, { interface: string; node_id: string; cost: number }[]>> {
  const { rows } = await db.query(
    `SELECT g.node_id, COALESCE(g.state, e.data -> 'state') -> 'bird' -> 'internal_topology' -> 'adjacencies' AS adjacencies
     FROM nodes n JOIN generations g ON g.node_id = n.node_id AND g.generation = n.current_generation
     LEFT JOIN events e ON e.position = g.event_position`,
  );
  return new Map(rows.map((r: { node_id: string; adjacencies: unknown }) => [r.node_id, Array.isArray(r.adjacencies) ? r.adjacencies : []]));
}

/** The peering an interface belongs to, as the console labels a link or a traffic row with it. */
export interface LinkPeering {
  id: number;
  name: string;
  remote_asn: number;
  remote_node_id: string | null;
  is_internal: boolean;
}

/** Every interface's peering (null: none) by node id and interface name, of one node or of all. */
export async function interfacePeerings(db: Queryable, nodeId?: string): Promise<Map<string, Map<string, LinkPeering | null>>> {
  const { rows } = await db.query(
    `SELECT i.node_id, i.name AS interface, p.id, p.name, p.remote_asn, p.remote_node_id, p.is_internal
     FROM interfaces i LEFT JOIN peerings p ON p.id = i.peering_id WHERE $1::text IS NULL OR i.node_id = $1`,
    [nodeId ?? null],
  );
  const byNode = new Map<string, Map<string, LinkPeering | null>>();
  for (const r of rows) {
    const peering =
      r.id === null ? null : { id: r.id, name: r.name, remote_asn: Number(r.remote_asn), remote_node_id: r.remote_node_id, is_internal: r.is_internal };
    if (!byNode.has(r.node_id)) byNode.set(r.node_id, new Map());
    byNode.get(r.node_id)!.set(r.interface, peering);
  }
  return byNode;
}

import type { HealthInputs } from '../../domain/telemetry/health.js';
import type { ApplyResult, ReconciliationReport, RoutingTable, RuntimeSnapshot, WireguardTraffic } from '../../domain/telemetry/reports.js';
import type { Queryable } from '../db/pool.js';
import { routeCountRows } from './route-counts.js';
import { LATEST_OBSERVATION } from './routing.js';
import { changeAgainstBase, statusBodies, type StoredStatusBody } from './status-bodies.js';
import { asStatusEvent, foldedWithBodies } from './status-compaction.js';

/**
 * The telemetry tables (migrations/0002_telemetry.sql), method by method. Times
 * passed as `now` come from the request's clock; `captured_at` is the agent's.
 */

export type StatusEventKind = 'snapshot' | 'report' | 'apply' | 'reresolve';
export const STATUS_EVENT_KINDS: readonly StatusEventKind[] = ['snapshot', 'report', 'apply', 'reresolve'];

export interface StatusEventRow {
  id: number;
  kind: StatusEventKind;
  generation: number | null;
  status: string | null;
  drift_count: number | null;
  created_at: string;
  payload: unknown;
}

/**
 * A table the retention job keeps 60 days of, by `column`. `partitionKey`: the
 * table is partitioned by UTC day on that column, which is never later than
 * `column` (a row's 5-minute bucket, or `column` itself), so a partition that ends
 * at or before the cutoff holds only rows to delete.
 */
export interface RetainedTable {
  table: string;
  column: string;
  partitionKey?: string;
  /** `column` is a UTC date: rows of days before the cutoff's day go (the cutoff's day is still read). */
  byDay?: boolean;
}

const iso = (t: Date | string | null) => (t === null ? null : new Date(t).toISOString());

/**
 * Appends one status snapshot (one per report; what its body changed against the
 * day's base, see status-bodies.ts) and returns its id.
 */
export async function insertStatusEvent(
  db: Queryable,
  nodeId: string,
  event: { kind: StatusEventKind; generation: number | null; status: string | null; drift_count: number | null; payload: unknown },
  now: Date,
): Promise<number> {
  const change = await changeAgainstBase(db, nodeId, event.kind, now, event.payload);
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO status_snapshots (node_id, kind, generation, status, drift_count, change, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
    [nodeId, event.kind, event.generation, event.status, event.drift_count, JSON.stringify(change), now],
  );
  return Number(rows[0].id);
}

/** A node's status events, newest first, optionally of one kind, with their whole bodies (raw rows and folded hours, status-compaction.ts). */
export async function listStatusEvents(db: Queryable, nodeId: string, kind: StatusEventKind | undefined, limit: number): Promise<StatusEventRow[]> {
  const { rows } = await db.query(
    `SELECT id, node_id, kind, generation, status, drift_count, created_at, change, body FROM status_snapshots
     WHERE node_id = $1 AND ($2::text IS NULL OR kind = $2) ORDER BY id DESC LIMIT $3`,
    [nodeId, kind ?? null, limit],
  );
  const payloads = await statusBodies(db, rows as StoredStatusBody[]);
  const raw = rows.map((r: Record<string, any>, i) => ({
    id: Number(r.id),
    kind: r.kind,
    generation: r.generation,
    status: r.status,
    drift_count: r.drift_count,
    created_at: iso(r.created_at)!,
    payload: payloads[i],
  }));
  const folded = (await foldedWithBodies(db, nodeId, kind ?? null, null, limit)).map((e) => {
    const { node_id: _, ...row } = asStatusEvent<StatusEventKind>(e);
    return row;
  });
  return [...raw, ...folded].sort((a, b) => b.id - a.id).slice(0, limit);
}

const NOT_RUNNING = (s: RuntimeSnapshot) => s.containers.filter((c) => c.state !== 'running').length;

/** The BGP protocols of the node's stored snapshot, its row locked until the transaction ends (consecutive snapshots compare in turn). */
export async function previousBgpProtocols(db: Queryable, nodeId: string): Promise<RuntimeSnapshot['bgp_protocols']> {
  const { rows } = await db.query(`SELECT snapshot->'bgp_protocols' AS p FROM node_status WHERE node_id = $1 FOR UPDATE`, [nodeId]);
  return (rows[0]?.p as RuntimeSnapshot['bgp_protocols'] | null) ?? [];
}

/** The BGP protocols of every node's latest snapshot, by node id (nodes without a snapshot are left out). */
export async function allBgpProtocols(db: Queryable): Promise<Map<string, RuntimeSnapshot['bgp_protocols']>> {
  const { rows } = await db.query(`SELECT node_id, snapshot->'bgp_protocols' AS p FROM node_status WHERE snapshot IS NOT NULL ORDER BY node_id`);
  return new Map(rows.map((r: Record<string, any>) => [r.node_id as string, (r.p ?? []) as RuntimeSnapshot['bgp_protocols']]));
}

/** Per node with a runtime snapshot: seconds from the snapshot's `captured_at` (agent clock) to its receipt (server clock). */
export async function snapshotIngestLags(db: Queryable): Promise<{ node_id: string; lag_seconds: number }[]> {
  const { rows } = await db.query<{ node_id: string; lag_seconds: number }>(
    `SELECT node_id, EXTRACT(epoch FROM snapshot_received_at - (snapshot->>'captured_at')::timestamptz)::float8 AS lag_seconds
     FROM node_status WHERE snapshot IS NOT NULL ORDER BY node_id`,
  );
  return rows.map((r) => ({ node_id: r.node_id, lag_seconds: Number(r.lag_seconds) }));
}

/** Upserts the node's latest snapshot and the health inputs it carries; answers the node's row as written. */
export async function upsertSnapshot(db: Queryable, snapshot: RuntimeSnapshot, now: Date): Promise<NodeStatusRow> {
  const established = snapshot.bgp_protocols.filter((p) => p.state === 'established').length;
  const { rows } = await db.query(
    `INSERT INTO node_status (node_id, snapshot, snapshot_received_at, snapshot_generation, bgp_total, bgp_established, containers_not_running, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $3)
     ON CONFLICT (node_id) DO UPDATE SET snapshot = EXCLUDED.snapshot, snapshot_received_at = EXCLUDED.snapshot_received_at,
       snapshot_generation = EXCLUDED.snapshot_generation, bgp_total = EXCLUDED.bgp_total, bgp_established = EXCLUDED.bgp_established,
       containers_not_running = EXCLUDED.containers_not_running, updated_at = EXCLUDED.updated_at
     RETURNING *`,
    [snapshot.node_id, JSON.stringify(snapshot), now, snapshot.generation ?? null, snapshot.bgp_protocols.length, established, NOT_RUNNING(snapshot)],
  );
  return statusRow(rows[0]);
}

export async function upsertReport(db: Queryable, report: ReconciliationReport, now: Date): Promise<void> {
  await db.query(
    `INSERT INTO node_status (node_id, report, report_status, report_received_at, updated_at) VALUES ($1, $2, $3, $4, $4)
     ON CONFLICT (node_id) DO UPDATE SET report = EXCLUDED.report, report_status = EXCLUDED.report_status,
       report_received_at = EXCLUDED.report_received_at, updated_at = EXCLUDED.updated_at`,
    [report.node_id, JSON.stringify(report), report.status, now],
  );
}

export async function upsertApply(db: Queryable, apply: ApplyResult, now: Date): Promise<void> {
  await db.query(
    `INSERT INTO node_status (node_id, apply, apply_status, apply_received_at, updated_at) VALUES ($1, $2, $3, $4, $4)
     ON CONFLICT (node_id) DO UPDATE SET apply = EXCLUDED.apply, apply_status = EXCLUDED.apply_status,
       apply_received_at = EXCLUDED.apply_received_at, updated_at = EXCLUDED.updated_at`,
    [apply.node_id, JSON.stringify(apply), apply.status, now],
  );
}

export interface NodeStatusRow extends HealthInputs {
  node_id: string;
  snapshot: RuntimeSnapshot | null;
  report: ReconciliationReport | null;
  report_received_at: Date | null;
  apply: ApplyResult | null;
  apply_received_at: Date | null;
}

function statusRow(r: Record<string, any>): NodeStatusRow {
  return {
    node_id: r.node_id,
    snapshot: r.snapshot,
    snapshot_received_at: r.snapshot_received_at,
    bgp_total: r.bgp_total,
    bgp_established: r.bgp_established,
    containers_not_running: r.containers_not_running,
    report: r.report,
    last_report_status: r.report_status,
    report_received_at: r.report_received_at,
    apply: r.apply,
    last_apply_status: r.apply_status,
    apply_received_at: r.apply_received_at,
  };
}

/** The latest observations of one node; undefined when it never reported anything. */
export async function nodeStatus(db: Queryable, nodeId: string): Promise<NodeStatusRow | undefined> {
  const { rows } = await db.query(`SELECT * FROM node_status WHERE node_id = $1`, [nodeId]);
  return rows[0] ? statusRow(rows[0]) : undefined;
}

/** Latest observations of every node that reported, by node id. */
export async function allNodeStatus(db: Queryable): Promise<Map<string, NodeStatusRow>> {
  const { rows } = await db.query(
    `SELECT node_id, snapshot_received_at, bgp_total, bgp_established, containers_not_running, report_status, apply_status, report_received_at, apply_received_at, NULL AS snapshot, NULL AS report, NULL AS apply FROM node_status ORDER BY node_id`,
  );
  return new Map(rows.map((r: Record<string, any>) => [r.node_id as string, statusRow(r)]));
}

/** Per-interface traffic archive of a snapshot: one row per interface and 5-minute bucket, the bucket's first snapshot (later ones in it are skipped). */
export function archiveInterfaceTraffic(db: Queryable, snapshot: RuntimeSnapshot, now: Date): Promise<void> {
  return archiveSnapshot(db, snapshot, now, { interfaces: true });
}

/** Self-metrics archive of a snapshot: one row per node and 5-minute bucket, the bucket's first snapshot. */
export function archiveSelfMetrics(db: Queryable, snapshot: RuntimeSnapshot, now: Date): Promise<void> {
  return archiveSnapshot(db, snapshot, now, { metrics: true });
}

/** The archives `archiveSnapshot` writes (all by default). */
export interface ArchiveParts {
  interfaces?: boolean;
  metrics?: boolean;
  routeCounts?: boolean;
}

const ALL_ARCHIVES: ArchiveParts = { interfaces: true, metrics: true, routeCounts: true };

/**
 * The archives' writes as common table expressions (`archive_interfaces`,
 * `archive_metrics`, `archive_route_counts`) of a statement whose $1 is the node id
 * and $2 the snapshot's instant, their other values (`snapshotArchiveValues`) from
 * `$first` on: `archiveSnapshot`'s statement, or a part of another one (the series
 * share's, infra/telemetry/series.ts).
 */
export function snapshotArchivesSql(first: number): string {
  const p = (i: number) => `$${first + i - 3}`;
  return `archive_interfaces AS (
         INSERT INTO interface_traffic_samples (node_id, interface, bucket, at, rx_bytes, tx_bytes)
         SELECT $1, i.name, date_bin('5 minutes', $2::timestamptz, to_timestamp(0)), $2, i.rx, i.tx FROM unnest(${p(3)}::text[], ${p(4)}::bigint[], ${p(5)}::bigint[]) AS i(name, rx, tx)
         ON CONFLICT DO NOTHING),
       archive_metrics AS (
         INSERT INTO self_metrics_samples (node_id, at, cpu_percent, rss_bytes, total_failures, log_warning_count, log_error_count, last_error_at, last_error_message,
           last_routing_collect_seconds, last_reresolve_seconds)
         SELECT $1, $2, ${p(7)}::float8, ${p(8)}::bigint, ${p(9)}::int, ${p(10)}::int, ${p(11)}::int, ${p(12)}::timestamptz, ${p(13)}::text, ${p(14)}::float8, ${p(15)}::float8 WHERE ${p(6)}::boolean
         ON CONFLICT DO NOTHING),
       archive_route_counts AS (
         INSERT INTO session_route_counts AS t (node_id, session, bucket, at, imported_v4, imported_v6, exported_v4, exported_v6)
         SELECT $1, r.session, date_bin('5 minutes', $2::timestamptz, to_timestamp(0)), $2, r.i4, r.i6, r.e4, r.e6
         FROM unnest(${p(16)}::text[], ${p(17)}::int[], ${p(18)}::int[], ${p(19)}::int[], ${p(20)}::int[]) AS r(session, i4, i6, e4, e6)
         ON CONFLICT (node_id, session, bucket) DO UPDATE SET
           at = EXCLUDED.at, imported_v4 = EXCLUDED.imported_v4, imported_v6 = EXCLUDED.imported_v6,
           exported_v4 = EXCLUDED.exported_v4, exported_v6 = EXCLUDED.exported_v6
         WHERE EXCLUDED.at >= t.at)`;
}

/** The values of `snapshotArchivesSql` (18, from its `first` on); undefined when `parts` leave nothing to write. */
export function snapshotArchiveValues(snapshot: RuntimeSnapshot, parts: ArchiveParts = ALL_ARCHIVES): unknown[] | undefined {
  const interfaces = parts.interfaces ? snapshot.interfaces : [];
  const counts = parts.routeCounts ? routeCountRows(snapshot) : [];
  if (interfaces.length === 0 && counts.length === 0 && !parts.metrics) return undefined;
  const m = snapshot.self_metrics;
  const count = (k: 'routes_imported_v4' | 'routes_imported_v6' | 'routes_exported_v4' | 'routes_exported_v6') => counts.map((p) => p[k] ?? null);
  return [
    interfaces.map((i) => i.name),
    interfaces.map((i) => i.rx_bytes),
    interfaces.map((i) => i.tx_bytes),
    parts.metrics === true,
    m.cpu,
    m.rss,
    m.total_failures,
    m.log_warning_count,
    m.log_error_count,
    m.last_error_at,
    m.last_error_message,
    m.last_routing_collect_seconds ?? null,
    m.last_reresolve_seconds ?? null,
    counts.map((p) => p.name),
    count('routes_imported_v4'),
    count('routes_imported_v6'),
    count('routes_exported_v4'),
    count('routes_exported_v6'),
  ];
}

/**
 * A snapshot's archives in one statement (issue 30: one round trip, not three): the
 * interface traffic and self-metrics archives (`archiveInterfaceTraffic`,
 * `archiveSelfMetrics`) and the sessions' route counts (route-counts.ts); `parts`
 * names the ones to write, all by default. The runtime snapshot's series share
 * usually carries them instead (`addSnapshotToSeries`), one statement for both.
 */
export async function archiveSnapshot(db: Queryable, snapshot: RuntimeSnapshot, now: Date, parts: ArchiveParts = ALL_ARCHIVES): Promise<void> {
  const values = snapshotArchiveValues(snapshot, parts);
  if (values === undefined) return;
  await db.query({ name: 'snapshot-archives', text: `WITH ${snapshotArchivesSql(3)} SELECT 1`, values: [snapshot.node_id, now, ...values] });
}

export interface TrafficTotals {
  rx_bytes: number;
  tx_bytes: number;
  peer_count: number;
}

export function trafficTotals(sample: WireguardTraffic): TrafficTotals {
  return {
    rx_bytes: sample.peers.reduce((sum, p) => sum + p.rx_bytes, 0),
    tx_bytes: sample.peers.reduce((sum, p) => sum + p.tx_bytes, 0),
    peer_count: sample.peers.length,
  };
}

/** A traffic sample as stored: the report, its sums and its placed time. */
export interface TrafficSampleRow {
  sample: WireguardTraffic;
  totals: TrafficTotals;
  at: Date;
}

export function insertWireguardTraffic(db: Queryable, sample: WireguardTraffic, totals: TrafficTotals, now: Date): Promise<void> {
  return insertWireguardTrafficRows(db, [{ sample, totals, at: now }]);
}

/**
 * One statement for samples of distinct nodes (the ingest's group commit): the sums
 * into the time series, the per-peer breakdown into each node's latest two samples
 * (`wireguard_traffic_latest`, for current rates per peer).
 */
export async function insertWireguardTrafficRows(db: Queryable, rows: readonly TrafficSampleRow[]): Promise<void> {
  await db.query({
    name: 'wireguard-traffic-rows',
    text: `WITH s AS (SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::bigint[], $4::bigint[], $5::int[], $6::text[]) AS s(node_id, at, rx, tx, n, peers)),
       series AS (
         INSERT INTO wireguard_traffic_samples (node_id, at, rx_bytes, tx_bytes, peer_count) SELECT node_id, at, rx, tx, n FROM s
         ON CONFLICT (node_id, at) DO UPDATE SET rx_bytes = EXCLUDED.rx_bytes, tx_bytes = EXCLUDED.tx_bytes, peer_count = EXCLUDED.peer_count
       )
     INSERT INTO wireguard_traffic_latest (node_id, at, peers) SELECT node_id, at, peers::jsonb FROM s
     ON CONFLICT (node_id) DO UPDATE SET
       previous_at = CASE WHEN wireguard_traffic_latest.at < EXCLUDED.at THEN wireguard_traffic_latest.at ELSE wireguard_traffic_latest.previous_at END,
       previous_peers = CASE WHEN wireguard_traffic_latest.at < EXCLUDED.at THEN wireguard_traffic_latest.peers ELSE wireguard_traffic_latest.previous_peers END,
       at = EXCLUDED.at, peers = EXCLUDED.peers
     WHERE wireguard_traffic_latest.at <= EXCLUDED.at`,
    values: [
      rows.map((r) => r.sample.node_id),
      rows.map((r) => r.at),
      rows.map((r) => r.totals.rx_bytes),
      rows.map((r) => r.totals.tx_bytes),
      rows.map((r) => r.totals.peer_count),
      rows.map((r) => JSON.stringify(r.sample.peers)),
    ],
  });
}

export interface WireguardPeerSample {
  at: string;
  peers: WireguardTraffic['peers'];
}

/** A node's latest WireGuard traffic sample per peer and the one before it (null until there are two). */
export interface LatestPeerSamples {
  latest: WireguardPeerSample;
  previous: WireguardPeerSample | null;
}

const latestPeerSamples = (r: Record<string, any>): LatestPeerSamples => ({
  latest: { at: iso(r.at)!, peers: r.peers },
  previous: r.previous_at ? { at: iso(r.previous_at)!, peers: r.previous_peers } : null,
});

export async function latestWireguardTraffic(db: Queryable, nodeId: string): Promise<LatestPeerSamples | undefined> {
  const { rows } = await db.query(`SELECT at, peers, previous_at, previous_peers FROM wireguard_traffic_latest WHERE node_id = $1`, [nodeId]);
  return rows[0] ? latestPeerSamples(rows[0]) : undefined;
}

/** Every node's `LatestPeerSamples`, by node id; nodes without a sample are absent. */
export async function allLatestWireguardTraffic(db: Queryable): Promise<Map<string, LatestPeerSamples>> {
  const { rows } = await db.query(`SELECT node_id, at, peers, previous_at, previous_peers FROM wireguard_traffic_latest ORDER BY node_id`);
  return new Map(rows.map((r: Record<string, any>) => [r.node_id as string, latestPeerSamples(r)]));
}

/** Stores a routing observation: a summary row, and the node's latest table (without its routes: the caller stores them as rows). Returns the observation id. */
export async function insertRoutingTable(db: Queryable, table: RoutingTable, now: Date): Promise<number> {
  const v6 = table.routes.filter((r) => r.prefix.includes(':')).length;
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO routing_observations (node_id, captured_at, received_at, size, size_v4, size_v6, rpki_observed) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
    [table.node_id, table.captured_at, now, table.routes.length, table.routes.length - v6, v6, table.rpki_observed],
  );
  const id = Number(rows[0].id);
  // The routes themselves are rows (`storeRoutingAnalytics`); `routes` (jsonb) is only what a table stored before migration 0010 left.
  await db.query(
    `INSERT INTO routing_tables (node_id, observation_id, observation_received_at, captured_at, rpki_observed) VALUES ($1, $2, $5, $3, $4)
     ON CONFLICT (node_id) DO UPDATE SET observation_id = EXCLUDED.observation_id, observation_received_at = EXCLUDED.observation_received_at, captured_at = EXCLUDED.captured_at,
       rpki_observed = EXCLUDED.rpki_observed, routes = NULL, summary = NULL`,
    [table.node_id, id, table.captured_at, table.rpki_observed, now],
  );
  return id;
}

export interface PrefixFlapRow {
  prefix: string;
  /** Null for own origin or no attribution. */
  peer_asn: number | null;
  origin_asn: number | null;
  score: number;
  flaps: number | null;
  last_flap_at: string | null;
  captured_at: string;
}

/** The node's current prefix flap rows, highest score first. */
export async function prefixFlapsOf(db: Queryable, nodeId: string): Promise<PrefixFlapRow[]> {
  const { rows } = await db.query(`SELECT * FROM prefix_flaps WHERE node_id = $1 ORDER BY score DESC, prefix, peer_asn NULLS FIRST`, [nodeId]);
  return rows.map((r: Record<string, any>) => ({
    prefix: r.prefix,
    peer_asn: r.peer_asn === null ? null : Number(r.peer_asn),
    origin_asn: r.origin_asn === null ? null : Number(r.origin_asn),
    score: r.score,
    flaps: r.flaps,
    last_flap_at: iso(r.last_flap_at),
    captured_at: iso(r.captured_at)!,
  }));
}

/**
 * Sample tables and their time column: what the retention job prunes. A table
 * partitioned by day (migrations/0030) names its partition key, a time column
 * no later than `column` (see `RetainedTable`).
 */
export const RETAINED_TABLES: readonly RetainedTable[] = [
  { table: 'status_snapshots', column: 'created_at', partitionKey: 'created_at' },
  { table: 'status_bases', column: 'day', byDay: true },
  { table: 'interface_traffic_samples', column: 'at', partitionKey: 'bucket' },
  { table: 'self_metrics_samples', column: 'at' },
  { table: 'wireguard_traffic_samples', column: 'at', partitionKey: 'at' },
  { table: 'routing_observations', column: 'received_at', partitionKey: 'received_at' },
  { table: 'routing_fleet_observations', column: 'received_at' },
];

/** Routes of every node's latest routing-table observation, by node id (nodes that never reported one are absent). */
export async function latestTableSizes(db: Queryable): Promise<Map<string, number>> {
  const { rows } = await db.query(`SELECT t.node_id, o.size FROM routing_tables t CROSS JOIN LATERAL (${LATEST_OBSERVATION}) o`);
  return new Map(rows.map((r: { node_id: string; size: number }) => [r.node_id, r.size]));
}

/** Drift items of every node's latest reconciliation report, by node id (unreported nodes are absent). */
export async function latestDriftCounts(db: Queryable): Promise<Map<string, number>> {
  const { rows } = await db.query(`SELECT node_id, jsonb_array_length(report -> 'drift_items') AS n FROM node_status WHERE report IS NOT NULL`);
  return new Map(rows.map((r: { node_id: string; n: number | null }) => [r.node_id, r.n ?? 0]));
}

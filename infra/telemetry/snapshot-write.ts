import { changesBetween, type JsonChange } from '../../domain/telemetry/changes.js';
import type { HealthInputs } from '../../domain/telemetry/health.js';
import type { BgpState, RuntimeSnapshot } from '../../domain/telemetry/reports.js';
import type { Queryable } from '../db/pool.js';
import { PerNode } from './per-node.js';
import { changeAndBase, StatusBaseCache } from './status-bodies.js';

/**
 * A runtime snapshot's write (issue 30: a report in as few round trips as it
 * takes): one read under the node's row lock, one write, inside the caller's
 * transaction. The samples (`node_status`: the latest body and the health
 * inputs; `status_snapshots`: the history, as changes against the day's base)
 * are written here; the transitions are events, appended by the caller only
 * when the snapshot changed what the stream recorded.
 */

/** What the node's previous snapshot left that the next one is compared with. */
export interface PreviousSnapshot {
  /** BGP protocols of the stored snapshot ([] when none). */
  previous: RuntimeSnapshot['bgp_protocols'];
  last_report_status: string | null;
  last_apply_status: string | null;
}

/** What the node's previous snapshot left, read under its row lock, and what its transitions recorded. */
export interface BeforeSnapshot extends PreviousSnapshot {
  /**
   * The node's `node_status_current` row (the inline projection of its
   * `node-status-<node_id>` stream) as this statement saw it; undefined: no row.
   */
  recorded: { health: string; sessions: Record<string, BgpState>; version: number } | undefined;
}

/**
 * Locks the node's `node_status` row (consecutive snapshots compare in turn) and
 * reads what the snapshot is compared with. Its own statement: the lock is taken
 * in the first one of the transaction (a row that does not exist yet is locked by
 * the write's upsert, and a concurrent first snapshot waits there).
 */
export async function readBeforeSnapshot(tx: Queryable, nodeId: string): Promise<BeforeSnapshot> {
  const { rows } = await tx.query({
    name: 'snapshot-before',
    text: `SELECT s.p, s.report_status, s.apply_status, c.health, c.sessions, c.version
           FROM (SELECT $1::text AS node_id) k
           LEFT JOIN LATERAL (SELECT snapshot->'bgp_protocols' AS p, report_status, apply_status FROM node_status WHERE node_id = k.node_id FOR UPDATE) s ON true
           LEFT JOIN node_status_current c ON c.node_id = k.node_id`,
    values: [nodeId],
  });
  const r = rows[0];
  return {
    previous: (r.p as RuntimeSnapshot['bgp_protocols'] | null) ?? [],
    last_report_status: r.report_status ?? null,
    last_apply_status: r.apply_status ?? null,
    recorded: r.version === null ? undefined : { health: r.health, sessions: r.sessions, version: r.version },
  };
}

/** The health inputs the snapshot leaves in `node_status` (what `upsertSnapshot` answers). */
export function inputsAfter(snapshot: RuntimeSnapshot, before: PreviousSnapshot, now: Date): HealthInputs {
  return {
    snapshot_received_at: now,
    bgp_total: snapshot.bgp_protocols.length,
    bgp_established: snapshot.bgp_protocols.filter((p) => p.state === 'established').length,
    containers_not_running: snapshot.containers.filter((c) => c.state !== 'running').length,
    last_report_status: before.last_report_status,
    last_apply_status: before.last_apply_status,
  };
}

/**
 * Writes the snapshot in one statement: the node's `node_status` row (latest body
 * and health inputs) and its `status_snapshots` row (what it changed against its
 * day's base, `status` the derived health). The base comes from `cache` when this
 * process has seen it (the statement checks it is still stored); otherwise one
 * statement before reads or makes it. Answers the `node_status` row's version
 * (`xmin`, see `KnownSnapshots`) and the base to cache once committed.
 */
export async function writeSnapshot(
  tx: Queryable,
  snapshot: RuntimeSnapshot,
  inputs: HealthInputs,
  health: string,
  now: Date,
  cache: StatusBaseCache,
): Promise<{ xmin: string; made?: { cacheKey: string; base: unknown } }> {
  const key = StatusBaseCache.key(snapshot.node_id, 'snapshot', now);
  const cached = cache.get(key);
  if (cached !== undefined) {
    const xmin = await write(tx, snapshot, inputs, health, now, changesBetween(cached, snapshot), true);
    if (xmin !== undefined) return { xmin };
    // Not stored any more (retention, a database reset): read or make it again.
    cache.delete(key);
  }
  const { change, base } = await changeAndBase(tx, snapshot.node_id, 'snapshot', now, snapshot);
  const xmin = await write(tx, snapshot, inputs, health, now, change, false);
  return { xmin: xmin!, made: { cacheKey: key, base } };
}

/** The `node_status` columns a snapshot sets, after `SET` (from $2 to $7 of `snapshotValues`). */
const SNAPSHOT_COLUMNS = `snapshot = $2, snapshot_received_at = $3, snapshot_generation = $4, bgp_total = $5, bgp_established = $6,
  containers_not_running = $7, updated_at = $3`;

const snapshotValues = (s: RuntimeSnapshot, inputs: HealthInputs, health: string, now: Date, change: JsonChange) => [
  s.node_id,
  JSON.stringify(s),
  now,
  s.generation ?? null,
  inputs.bgp_total,
  inputs.bgp_established,
  inputs.containers_not_running,
  s.generation ?? null,
  health,
  JSON.stringify(change),
];

async function write(
  tx: Queryable,
  s: RuntimeSnapshot,
  inputs: HealthInputs,
  health: string,
  now: Date,
  change: JsonChange,
  checkBase: boolean,
): Promise<string | undefined> {
  const { rows } = await tx.query({
    name: checkBase ? 'snapshot-write-cached-base' : 'snapshot-write',
    text: `WITH base AS (SELECT true AS ok WHERE NOT $11::boolean OR EXISTS (SELECT 1 FROM status_bases WHERE node_id = $1 AND kind = 'snapshot' AND day = ($3::timestamptz AT TIME ZONE 'UTC')::date)),
       latest AS (
         INSERT INTO node_status (node_id, snapshot, snapshot_received_at, snapshot_generation, bgp_total, bgp_established, containers_not_running, updated_at)
         SELECT $1, $2, $3, $4, $5, $6, $7, $3 FROM base
         ON CONFLICT (node_id) DO UPDATE SET snapshot = EXCLUDED.snapshot, snapshot_received_at = EXCLUDED.snapshot_received_at,
           snapshot_generation = EXCLUDED.snapshot_generation, bgp_total = EXCLUDED.bgp_total, bgp_established = EXCLUDED.bgp_established,
           containers_not_running = EXCLUDED.containers_not_running, updated_at = EXCLUDED.updated_at
         RETURNING node_status.xmin::text AS xmin
       ),
       history AS (
         INSERT INTO status_snapshots (node_id, kind, generation, status, drift_count, change, created_at)
         SELECT $1, 'snapshot', $8, $9, NULL, $10, $3 FROM base RETURNING id
       )
       SELECT latest.xmin FROM latest, history`,
    values: [...snapshotValues(s, inputs, health, now, change), checkBase],
  });
  return rows[0]?.xmin;
}

/**
 * What this process wrote as each node's latest snapshot (issue 30: a snapshot
 * in one statement, without the transaction's read under the row lock): what
 * the next snapshot is compared with, and the `node_status` row version (`xmin`)
 * it left. An entry is used only while the row is still that version, which the
 * write checks under the row lock: any other write of the row (a reconciliation
 * or apply status, another instance's snapshot) makes a new version, and the
 * snapshot then goes the long way.
 */
export class KnownSnapshots extends PerNode<{ before: PreviousSnapshot; xmin: string }> {}

/** A write on a row version that was not the stored one: the stored row as the statement saw it, to try again from. */
export interface StaleSnapshot {
  stale: { before: PreviousSnapshot; xmin: string };
}

/**
 * `writeSnapshot` in one statement outside a transaction, on the row version
 * `xmin` (what this process wrote last, or read): only if the row is still that
 * version and the day's base is cached and still stored. Answers the new version
 * and the node's recorded transitions as the statement saw them (as
 * `readBeforeSnapshot` reads them). When the row is another version (another
 * instance wrote it), nothing is written and the row as the statement saw it is
 * answered (`stale`), to compare with and write on again; undefined when there is
 * no row or no cached base (then the caller writes the long way).
 */
export async function writeOverKnown(
  db: Queryable,
  snapshot: RuntimeSnapshot,
  xmin: string,
  inputs: HealthInputs,
  health: string,
  now: Date,
  cache: StatusBaseCache,
): Promise<{ xmin: string; recorded: BeforeSnapshot['recorded'] } | StaleSnapshot | undefined> {
  const cached = cache.get(StatusBaseCache.key(snapshot.node_id, 'snapshot', now));
  if (cached === undefined) return undefined;
  const { rows } = await db.query({
    name: 'snapshot-write-over-known',
    text: `WITH base AS (SELECT 1 FROM status_bases WHERE node_id = $1 AND kind = 'snapshot' AND day = ($3::timestamptz AT TIME ZONE 'UTC')::date),
       latest AS (
         UPDATE node_status SET ${SNAPSHOT_COLUMNS}
         WHERE node_id = $1 AND xmin = $11::xid AND EXISTS (SELECT 1 FROM base)
         RETURNING node_status.xmin::text AS xmin
       ),
       history AS (
         INSERT INTO status_snapshots (node_id, kind, generation, status, drift_count, change, created_at)
         SELECT $1, 'snapshot', $8, $9, NULL, $10, $3 FROM latest RETURNING id
       )
       SELECT true AS written, latest.xmin, c.health, c.sessions, c.version, NULL::jsonb AS p, NULL AS report_status, NULL AS apply_status
         FROM latest CROSS JOIN history LEFT JOIN node_status_current c ON c.node_id = $1
       UNION ALL
       SELECT false, s.xmin::text, NULL, NULL, NULL, s.snapshot->'bgp_protocols', s.report_status, s.apply_status
         FROM node_status s WHERE s.node_id = $1 AND s.xmin <> $11::xid AND EXISTS (SELECT 1 FROM base) AND NOT EXISTS (SELECT 1 FROM latest)`,
    values: [...snapshotValues(snapshot, inputs, health, now, changesBetween(cached, snapshot)), xmin],
  });
  const r = rows[0];
  if (r === undefined) return undefined;
  if (!r.written) return { stale: { before: { previous: r.p ?? [], last_report_status: r.report_status, last_apply_status: r.apply_status }, xmin: r.xmin } };
  return { xmin: r.xmin, recorded: r.version === null ? undefined : { health: r.health, sessions: r.sessions, version: r.version } };
}

import { changesBetween, type JsonChange } from '../../domain/telemetry/changes.js';
import type { HealthInputs } from '../../domain/telemetry/health.js';
import type { BgpState, RuntimeSnapshot } from '../../domain/telemetry/reports.js';
import type { Queryable } from '../db/pool.js';
import { changeAndBase, StatusBaseCache } from './status-bodies.js';

/**
 * A runtime snapshot's write (issue 30: a report in as few round trips as it
 * takes): one read under the node's row lock, one write, inside the caller's
 * transaction. The samples (`node_status`: the latest body and the health
 * inputs; `status_snapshots`: the history, as changes against the day's base)
 * are written here; the transitions are events, appended by the caller only
 * when the snapshot changed what the stream recorded.
 */

/** What the node's previous snapshot left, read under its row lock. */
export interface BeforeSnapshot {
  /** BGP protocols of the stored snapshot ([] when none). */
  previous: RuntimeSnapshot['bgp_protocols'];
  last_report_status: string | null;
  last_apply_status: string | null;
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
export function inputsAfter(snapshot: RuntimeSnapshot, before: BeforeSnapshot, now: Date): HealthInputs {
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
 * statement before reads or makes it. Answers the base to cache once committed.
 */
export async function writeSnapshot(
  tx: Queryable,
  snapshot: RuntimeSnapshot,
  inputs: HealthInputs,
  health: string,
  now: Date,
  cache: StatusBaseCache,
): Promise<{ cacheKey: string; base: unknown } | undefined> {
  const key = StatusBaseCache.key(snapshot.node_id, 'snapshot', now);
  const cached = cache.get(key);
  if (cached !== undefined) {
    if (await write(tx, snapshot, inputs, health, now, changesBetween(cached, snapshot), true)) return undefined;
    // Not stored any more (retention, a database reset): read or make it again.
    cache.delete(key);
  }
  const { change, base } = await changeAndBase(tx, snapshot.node_id, 'snapshot', now, snapshot);
  await write(tx, snapshot, inputs, health, now, change, false);
  return { cacheKey: key, base };
}

async function write(
  tx: Queryable,
  s: RuntimeSnapshot,
  inputs: HealthInputs,
  health: string,
  now: Date,
  change: JsonChange,
  checkBase: boolean,
): Promise<boolean> {
  const { rows } = await tx.query({
    name: checkBase ? 'snapshot-write-cached-base' : 'snapshot-write',
    text: `WITH base AS (SELECT true AS ok WHERE NOT $11::boolean OR EXISTS (SELECT 1 FROM status_bases WHERE node_id = $1 AND kind = 'snapshot' AND day = ($3::timestamptz AT TIME ZONE 'UTC')::date)),
       latest AS (
         INSERT INTO node_status (node_id, snapshot, snapshot_received_at, snapshot_generation, bgp_total, bgp_established, containers_not_running, updated_at)
         SELECT $1, $2, $3, $4, $5, $6, $7, $3 FROM base
         ON CONFLICT (node_id) DO UPDATE SET snapshot = EXCLUDED.snapshot, snapshot_received_at = EXCLUDED.snapshot_received_at,
           snapshot_generation = EXCLUDED.snapshot_generation, bgp_total = EXCLUDED.bgp_total, bgp_established = EXCLUDED.bgp_established,
           containers_not_running = EXCLUDED.containers_not_running, updated_at = EXCLUDED.updated_at
       )
       INSERT INTO status_snapshots (node_id, kind, generation, status, drift_count, change, created_at)
       SELECT $1, 'snapshot', $8, $9, NULL, $10, $3 FROM base RETURNING id`,
    values: [
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
      checkBase,
    ],
  });
  return rows.length > 0;
}

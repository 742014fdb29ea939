import { PROBE_COOLDOWN_MS, type LatencyProbe, type MtuProbe, type PortalProbeKind } from '../../domain/autopeering/probes.js';
import type { Queryable } from '../db/pool.js';

/**
 * The portal probes' cooldown and last results (telemetry migration 0009,
 * `portal_probe_runs`): one row per request and probe kind.
 */

export type Claim = { ok: true } | { ok: false; retryAt: Date };

/**
 * Takes the probe's cooldown slot: one statement, so of two concurrent calls
 * one wins and the other reads the winner's time (429). A slot whose last
 * claim is 10 minutes old (or released) is free.
 */
export async function claimProbe(db: Queryable, requestId: number, kind: PortalProbeKind, now: Date): Promise<Claim> {
  const { rows } = await db.query(
    `INSERT INTO portal_probe_runs AS r (request_id, kind, claimed_at) VALUES ($1, $2, $3)
     ON CONFLICT (request_id, kind) DO UPDATE SET claimed_at = EXCLUDED.claimed_at
       WHERE r.claimed_at IS NULL OR r.claimed_at <= $3::timestamptz - $4 * interval '1 millisecond'
     RETURNING request_id`,
    [requestId, kind, now, PROBE_COOLDOWN_MS],
  );
  if (rows.length > 0) return { ok: true };
  const { rows: held } = await db.query(`SELECT claimed_at FROM portal_probe_runs WHERE request_id = $1 AND kind = $2`, [requestId, kind]);
  const claimedAt: Date = held[0]?.claimed_at ?? now;
  return { ok: false, retryAt: new Date(claimedAt.getTime() + PROBE_COOLDOWN_MS) };
}

/** Frees the slot of a probe that could not start (no job was created): it cost nothing. */
export async function releaseProbe(db: Queryable, requestId: number, kind: PortalProbeKind, claimedAt: Date): Promise<void> {
  await db.query(`UPDATE portal_probe_runs SET claimed_at = NULL WHERE request_id = $1 AND kind = $2 AND claimed_at = $3`, [requestId, kind, claimedAt]);
}

export async function storeProbeResult(db: Queryable, requestId: number, kind: PortalProbeKind, result: MtuProbe | LatencyProbe, at: Date): Promise<void> {
  await db.query(
    `INSERT INTO portal_probe_runs (request_id, kind, result, result_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (request_id, kind) DO UPDATE SET result = EXCLUDED.result, result_at = EXCLUDED.result_at`,
    [requestId, kind, JSON.stringify(result), at],
  );
}

export interface StoredProbe<T> {
  result: T;
  probed_at: string;
}

/** The last result of each probe kind of a request (null: never probed successfully). */
export async function probeResults(
  db: Queryable,
  requestId: number,
): Promise<{ mtu: StoredProbe<MtuProbe> | null; latency: StoredProbe<LatencyProbe> | null }> {
  const { rows } = await db.query(`SELECT kind, result, result_at FROM portal_probe_runs WHERE request_id = $1 AND result IS NOT NULL`, [requestId]);
  const of = (kind: PortalProbeKind) => {
    const row = rows.find((r: { kind: string }) => r.kind === kind);
    return row ? { result: row.result, probed_at: (row.result_at as Date).toISOString() } : null;
  };
  return { mtu: of('mtu') as StoredProbe<MtuProbe> | null, latency: of('latency') as StoredProbe<LatencyProbe> | null };
}

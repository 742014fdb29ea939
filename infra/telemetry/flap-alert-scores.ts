import type { Queryable } from '../db/pool.js';

/**
 * The flap-alert job's table (migrations/0040): the scores of the open alerts
 * as of its last evaluation. The `flap_alerts` read model stays its
 * projection's alone; `FLAP_ALERT_COLUMNS` is how the alert views read both.
 */

/**
 * Writes the scores of the evaluation at `at` in one statement: each scored
 * alert's last score, peak and nodes; rows of alerts not in `openIds` (resolved
 * since) go. An open alert without a reading keeps its previous row.
 */
export async function scoreOpenFlapAlerts(
  db: Queryable,
  openIds: readonly number[],
  scores: readonly { alert_id: number; score: number; nodes: string[] }[],
  at: Date,
): Promise<void> {
  await db.query(
    `WITH gone AS (DELETE FROM flap_alert_scores WHERE alert_id <> ALL($5::bigint[]))
     INSERT INTO flap_alert_scores AS t (alert_id, nodes, peak_score, last_score, scored_at)
     SELECT s.alert_id, s.nodes::text[], s.score, s.score, $4 FROM unnest($1::bigint[], $2::float8[], $3::text[]) AS s(alert_id, score, nodes)
     ON CONFLICT (alert_id) DO UPDATE SET nodes = EXCLUDED.nodes, peak_score = GREATEST(t.peak_score, EXCLUDED.last_score),
       last_score = EXCLUDED.last_score, scored_at = EXCLUDED.scored_at`,
    [scores.map((s) => s.alert_id), scores.map((s) => s.score), scores.map((s) => `{${s.nodes.map((n) => JSON.stringify(n)).join(',')}}`), at, openIds],
  );
}

/**
 * The columns of `flap_alerts a LEFT JOIN flap_alert_scores s USING (alert_id)`
 * as the views show an alert: an open one with the job's scores (its peak the
 * greater of the opening score and the job's), a resolved one as its resolution left it.
 */
export const FLAP_ALERT_COLUMNS = `a.alert_id, a.alert_key, a.kind, a.node_id, a.session, a.prefix, a.peer_asn,
  CASE WHEN a.resolved_at IS NULL AND s.alert_id IS NOT NULL THEN s.nodes ELSE a.nodes END AS nodes,
  CASE WHEN a.resolved_at IS NULL AND s.alert_id IS NOT NULL THEN GREATEST(a.peak_score, s.peak_score) ELSE a.peak_score END AS peak_score,
  CASE WHEN a.resolved_at IS NULL AND s.alert_id IS NOT NULL THEN s.last_score ELSE a.last_score END AS last_score,
  CASE WHEN a.resolved_at IS NULL AND s.alert_id IS NOT NULL THEN s.scored_at ELSE a.scored_at END AS scored_at,
  a.started_at, a.resolved_at, a.resolution`;

/** The FROM clause that goes with `FLAP_ALERT_COLUMNS`. */
export const FLAP_ALERTS_WITH_SCORES = `flap_alerts a LEFT JOIN flap_alert_scores s ON s.alert_id = a.alert_id`;

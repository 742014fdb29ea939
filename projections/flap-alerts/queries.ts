import { type AlertKey, type FlapAlertRow, type OpenAlert, type OpenAlerts } from '../../domain/flaps/alerts.js';
import type { Queryable } from '../../infra/db/pool.js';
import { FLAP_ALERT_COLUMNS, FLAP_ALERTS_WITH_SCORES } from '../../infra/telemetry/flap-alert-scores.js';

export type { FlapAlertRow };

const keyOfRow = (r: { kind: string; node_id: string; session: string; prefix: string; peer_asn: string | null }): AlertKey =>
  r.kind === 'session'
    ? { kind: 'session', node_id: r.node_id, session: r.session }
    : { kind: 'prefix', prefix: r.prefix, peer_asn: r.peer_asn === null ? null : Number(r.peer_asn) };

/** A `flap_alerts` row as pg returns it (bigint as string). */
interface AlertDbRow {
  alert_id: string;
  kind: 'session' | 'prefix';
  node_id: string | null;
  session: string | null;
  prefix: string | null;
  peer_asn: string | null;
  nodes: string[];
  peak_score: number;
  last_score: number;
  started_at: Date;
  resolved_at: Date | null;
}

const rowOut = (r: AlertDbRow): FlapAlertRow => ({
  id: Number(r.alert_id),
  kind: r.kind,
  node_id: r.node_id,
  name: r.session,
  prefix: r.prefix,
  peer_asn: r.peer_asn === null ? null : Number(r.peer_asn),
  nodes: r.nodes,
  peak_score: Number(r.peak_score),
  last_score: Number(r.last_score),
  started_at: new Date(r.started_at).toISOString(),
  resolved_at: r.resolved_at === null ? null : new Date(r.resolved_at).toISOString(),
  active: r.resolved_at === null,
});

/** The open alerts by key string, and the `flap-alerts` stream version the table reflects (-1: no event applied). */
export async function openFlapAlerts(db: Queryable): Promise<{ version: number; open: OpenAlerts }> {
  const [alerts, stream] = await Promise.all([
    db.query(`SELECT ${FLAP_ALERT_COLUMNS} FROM ${FLAP_ALERTS_WITH_SCORES} WHERE a.resolved_at IS NULL`),
    db.query(`SELECT version FROM flap_alerts_stream`),
  ]);
  const open = new Map<string, OpenAlert>(
    alerts.rows.map((r) => [
      r.alert_key,
      { alert_id: Number(r.alert_id), key: keyOfRow(r), nodes: r.nodes, peak_score: Number(r.peak_score), last_score: Number(r.last_score) },
    ]),
  );
  return { version: stream.rows.length ? Number(stream.rows[0].version) : -1, open };
}

/** Alerts newest first (by id, the order they opened), `active` true: open only, false: resolved only, undefined: both. */
export async function flapAlertPage(db: Queryable, q: { active?: boolean; limit: number; beforeId?: number }): Promise<FlapAlertRow[]> {
  const { rows } = await db.query<AlertDbRow>(
    `SELECT ${FLAP_ALERT_COLUMNS} FROM ${FLAP_ALERTS_WITH_SCORES}
     WHERE ($1::boolean IS NULL OR (a.resolved_at IS NULL) = $1) AND ($2::bigint IS NULL OR a.alert_id < $2)
     ORDER BY a.alert_id DESC LIMIT $3`,
    [q.active ?? null, q.beforeId ?? null, q.limit],
  );
  return rows.map(rowOut);
}

/**
 * The alerts of a peer AS, open and resolved (of those, the kept 500), newest
 * first: prefix alerts of its directions and session alerts of eBGP sessions to
 * it (`/ui/fleet/flap-peers/{asn}` `alerts[]`).
 */
export async function flapAlertsOfPeer(db: Queryable, asn: number, limit: number): Promise<FlapAlertRow[]> {
  const { rows } = await db.query<AlertDbRow>(
    `SELECT ${FLAP_ALERT_COLUMNS} FROM ${FLAP_ALERTS_WITH_SCORES} WHERE a.peer_asn = $1 ORDER BY a.alert_id DESC LIMIT $2`,
    [asn, limit],
  );
  return rows.map(rowOut);
}

/** Every peer AS a kept alert names (prefix alerts' directions, eBGP session alerts' remote AS): each of them has flap data. */
export async function alertedPeerAsns(db: Queryable): Promise<number[]> {
  const { rows } = await db.query<{ peer_asn: string }>(`SELECT DISTINCT peer_asn FROM flap_alerts WHERE peer_asn IS NOT NULL`);
  return rows.map((r) => Number(r.peer_asn));
}

/** How many alerts of each kind are open now (`dn42_flap_alerts_open`). */
export async function openFlapAlertCounts(db: Queryable): Promise<{ session: number; prefix: number }> {
  const { rows } = await db.query<{ kind: 'session' | 'prefix'; n: number }>(
    `SELECT kind, count(*)::int AS n FROM flap_alerts WHERE resolved_at IS NULL GROUP BY kind`,
  );
  const counts = { session: 0, prefix: 0 };
  for (const r of rows) counts[r.kind] = r.n;
  return counts;
}

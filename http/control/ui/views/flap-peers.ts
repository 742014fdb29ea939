import { NotFound } from '../../../../domain/errors.js';
import { localizePrefixes, sessionScoresOf, type SessionScores } from '../../../../domain/flaps/localize.js';
import { flapPeerRows, type FlapPeerRow } from '../../../../domain/flaps/peers.js';
import { asnsOf, flatRows, type NodePrefixFlap } from '../../../../domain/flaps/prefix-rows.js';
import { withTransaction, type PoolClient } from '../../../../infra/db/pool.js';
import { readPrefixFlaps } from '../../../../infra/telemetry/prefix-flaps.js';
import { alertedPeerAsns, flapAlertsOfPeer } from '../../../../projections/flap-alerts/queries.js';
import { listNodes } from '../../../../projections/fleet/queries.js';
import type { ServiceContext } from '../../../shared/context.js';
import { fleetSessionRows } from '../flaps/sessions.js';
import { originNames } from '../../shared/routing-views.js';

/** `prefixes[]` of the peer detail: the flat prefix flap rows of the AS from this score on (document 3). */
export const PEER_PREFIXES_MIN_SCORE = 0.5;

interface Evidence {
  rows: NodePrefixFlap[];
  peers: FlapPeerRow[];
  sessions: SessionScores;
}

/**
 * The prefix rows, the session rows and the alerts from one snapshot
 * (REPEATABLE READ): a prefix report, a runtime snapshot or an alert
 * evaluation landing between the reads would show a peer half before and half
 * after it. `more` reads on in the same snapshot. Decommissioned and deleted
 * nodes are left out, as in the prefix and session views.
 */
async function inSnapshot<T>(ctx: ServiceContext, now: Date, more: (db: PoolClient, evidence: Evidence) => Promise<T>): Promise<T> {
  return withTransaction(
    ctx.pool,
    async (db) => {
      const nodes = await listNodes(db);
      const active = new Set(nodes.filter((n) => n.lifecycle !== 'decommissioned').map((n) => n.node_id));
      const rows = (await readPrefixFlaps(db)).rows.filter((r) => active.has(r.node_id));
      const sessions = await fleetSessionRows(db, now);
      const alerted = await alertedPeerAsns(db);
      return more(db, { rows, peers: flapPeerRows(rows, sessions, now.getTime(), alerted), sessions: sessionScoresOf(sessions) });
    },
    'REPEATABLE READ',
  );
}

const named = (row: FlapPeerRow, names: ReadonlyMap<number, string> | null): FlapPeerRow => ({ ...row, name: names?.get(row.asn) ?? null });

/** `GET /ui/fleet/flap-peers`: peer rows by severity descending, at most `limit`; names for the rows answered only (null without a replica). */
export async function flapPeersView(ctx: ServiceContext, q: { limit: number }) {
  const now = ctx.now();
  const peers = (await inSnapshot(ctx, now, async (_db, e) => e.peers)).slice(0, q.limit);
  const names = await originNames(
    ctx,
    peers.map((p) => p.asn),
  );
  return { generated_at: now.toISOString(), peers: peers.map((p) => named(p, names)) };
}

export interface FlapPeerQuery {
  prefixes_limit: number;
  alerts_limit: number;
}

/**
 * `GET /ui/fleet/flap-peers/{asn}`: the peer row, its flat prefix flap rows
 * from score 0.5 (MOAS judged over every direction of the prefix, as in the
 * fleet list), highest first, and its alerts newest first (prefix alerts of
 * its direction, session alerts of eBGP sessions to it); 404 for an AS without
 * flap data.
 */
export async function flapPeerView(ctx: ServiceContext, asn: number, q: FlapPeerQuery) {
  const detail = await flapPeerDetail(ctx, asn, q);
  if (!detail) throw new NotFound(`no flap data for AS${asn}`);
  return detail;
}

/** The answer of `flapPeerView`, or null for an AS without flap data (the portal's `/my/flaps` answers that with `has_flaps` false). */
export async function flapPeerDetail(ctx: ServiceContext, asn: number, q: FlapPeerQuery) {
  const now = ctx.now();
  const found = await inSnapshot(ctx, now, async (db, { rows, peers, sessions }) => {
    const peer = peers.find((p) => p.asn === asn);
    if (!peer) return null;
    return { rows, peer, alerts: await flapAlertsOfPeer(db, asn, q.alerts_limit), sessions };
  });
  if (!found) return null;
  const { rows, peer, alerts, sessions } = found;
  const names = await originNames(ctx, [asn, ...asnsOf(rows.filter((r) => r.peer_asn === asn))]);
  // The same rows as the prefix flap list, localisation included (from this snapshot).
  const localizations = localizePrefixes(rows, sessions, names, now.getTime());
  const prefixes = flatRows(rows, names, now.getTime(), PEER_PREFIXES_MIN_SCORE, Infinity, localizations, Infinity)
    .filter((r) => r.peer_asn === asn)
    .slice(0, q.prefixes_limit);
  return { generated_at: now.toISOString(), ...named(peer, names), prefixes, alerts };
}

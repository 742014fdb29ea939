import { PREFIX_LIST_LINE, rowScoreAt } from './prefix-scores.js';
import type { NodePrefixFlap } from './prefix-rows.js';
import { SESSION_FLAP } from './session.js';

/**
 * Flap peers (document 3, "Other flap records", flap peer row): the flap
 * evidence of the fleet gathered per peer AS, the AS where a flap enters the
 * fleet. Prefix evidence is a stored prefix flap row whose `peer_asn` is the AS;
 * session evidence is an eBGP session of the latest snapshots whose
 * `remote_asn` is the AS (iBGP sessions lead to our own AS, never a peer). Pure:
 * the stored rows, the session rows and the clock come in.
 */

/**
 * Below this decayed score a key is no flap data any more (the agent forgets a
 * prefix key there too: one change after about 66 minutes; a session's single
 * flap after about 3.3 hours). Without it a peer that flapped once would stay
 * listed for ever at severity 1e-300.
 */
export const FLAP_DATA_FLOOR = 0.01;

/**
 * Severity normalises each level by its list line (prefix 20, session 3): 1
 * means the peer's worst prefix or worst session is exactly `flapping`, so
 * `severity >= 1` if and only if the row shows something flapping.
 */
export function peerSeverity(prefixScoreMax: number | null, sessionScoreMax: number | null): number {
  return Math.max((prefixScoreMax ?? 0) / PREFIX_LIST_LINE, (sessionScoreMax ?? 0) / SESSION_FLAP.listLine);
}

/** One eBGP session as the peer row lists it, with what the evidence needs. */
export interface PeerSessionInput {
  node_id: string;
  name: string;
  kind: 'ebgp' | 'ibgp';
  remote_asn: number | null;
  state: string;
  flap_score: number | null;
  flapping: boolean;
  last_transition_at: string | null;
}

export interface PeerSession {
  node_id: string;
  session: string;
  state: string;
  flap_score: number | null;
  flapping: boolean;
}

export interface FlapPeerRow {
  asn: number;
  name: string | null;
  severity: number;
  prefix_count: number;
  prefixes_flapping: number;
  prefix_score_max: number | null;
  session_score_max: number | null;
  nodes: string[];
  last_change_at: string | null;
  sessions: PeerSession[];
}

interface Evidence {
  prefixes: NodePrefixFlap[];
  sessions: PeerSessionInput[];
}

const maxOf = (values: readonly number[]): number | null => (values.length ? Math.max(...values) : null);
const latestOf = (times: readonly (string | null)[]): string | null =>
  times
    .filter((t): t is string => t !== null)
    .sort()
    .at(-1) ?? null;
const byNodeThenName = (a: PeerSession, b: PeerSession) =>
  a.node_id < b.node_id ? -1 : a.node_id > b.node_id ? 1 : a.session < b.session ? -1 : a.session > b.session ? 1 : 0;

function peerRow(asn: number, { prefixes, sessions }: Evidence, now: number): FlapPeerRow {
  // Per prefix, its highest decayed score over the nodes that report it.
  const perPrefix = new Map<string, number>();
  for (const r of prefixes) perPrefix.set(r.prefix, Math.max(perPrefix.get(r.prefix) ?? 0, rowScoreAt(r, now)));
  const prefixScoreMax = maxOf([...perPrefix.values()]);
  const sessionScoreMax = maxOf(sessions.flatMap((s) => (s.flap_score === null ? [] : [s.flap_score])));
  return {
    asn,
    name: null,
    severity: peerSeverity(prefixScoreMax, sessionScoreMax),
    prefix_count: perPrefix.size,
    prefixes_flapping: [...perPrefix.values()].filter((s) => s >= PREFIX_LIST_LINE).length,
    prefix_score_max: prefixScoreMax,
    session_score_max: sessionScoreMax,
    nodes: [...new Set([...prefixes.map((r) => r.node_id), ...sessions.map((s) => s.node_id)])].sort(),
    last_change_at: latestOf([...prefixes.map((r) => r.last_flap_at), ...sessions.map((s) => s.last_transition_at)]),
    sessions: sessions
      .map((s) => ({ node_id: s.node_id, session: s.name, state: s.state, flap_score: s.flap_score, flapping: s.flapping }))
      .sort(byNodeThenName),
  };
}

/**
 * Every peer AS with flap data, by severity descending (then ASN). An AS has
 * flap data while one of its prefix rows or one of its eBGP sessions is at
 * least FLAP_DATA_FLOOR decayed to `now`, or while the alert read model keeps
 * an alert naming it (`alertedAsns`, open or resolved). Its row counts only the
 * prefix rows at or over the floor but lists all its eBGP sessions
 * (`flap_score` null: never recorded). `name` is left null for the caller.
 */
export function flapPeerRows(
  prefixes: readonly NodePrefixFlap[],
  sessions: readonly PeerSessionInput[],
  now: number,
  alertedAsns: readonly number[] = [],
): FlapPeerRow[] {
  const evidence = new Map<number, Evidence>();
  const of = (asn: number) => evidence.get(asn) ?? evidence.set(asn, { prefixes: [], sessions: [] }).get(asn)!;
  for (const r of prefixes) {
    if (r.peer_asn !== null && rowScoreAt(r, now) >= FLAP_DATA_FLOOR) of(r.peer_asn).prefixes.push(r);
  }
  const external = sessions.filter((s): s is PeerSessionInput & { remote_asn: number } => s.kind === 'ebgp' && s.remote_asn !== null);
  for (const s of external) if ((s.flap_score ?? 0) >= FLAP_DATA_FLOOR) of(s.remote_asn);
  for (const asn of alertedAsns) of(asn);
  for (const s of external) evidence.get(s.remote_asn)?.sessions.push(s);
  return [...evidence].map(([asn, e]) => peerRow(asn, e, now)).sort((a, b) => b.severity - a.severity || a.asn - b.asn);
}

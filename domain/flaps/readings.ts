import type { ScoreReading } from './alerts.js';
import { FLAP_DATA_FLOOR } from './peers.js';
import type { NodePrefixFlap } from './prefix-rows.js';
import { PREFIX_LIST_LINE, rowScoreAt } from './prefix-scores.js';
import { decayScore, SESSION_FLAP } from './session.js';

/**
 * The fleet's flap scores now, as the alert job and the flap-rate samples read
 * them: session scores decayed from the session-flaps read model, prefix scores
 * per (prefix, peer AS) the highest decayed score over the nodes. The caller
 * passes only the rows of active nodes (decommissioned and deleted ones left
 * out, as the views do). Pure.
 */

/** A session's stored score (as of `score_at`, its latest flap; null: none yet). */
export interface StoredSessionScore {
  node_id: string;
  session: string;
  score: number;
  score_at: Date | null;
}

/**
 * Null: no flap record of the session (never seen, or seen but never flapped:
 * `score_at` null); otherwise the stored score decayed to `now`, and 0 once
 * decayed below the flap data floor (document 3: "null when the session never
 * had a record; 0.0 means recorded but decayed"; a single flap reads 0 after
 * about 3.3 hours instead of a tail like 1e-29).
 */
export function sessionScoreAt(record: Pick<StoredSessionScore, 'score' | 'score_at'> | undefined, now: Date): number | null {
  if (!record?.score_at) return null;
  const score = decayScore(record.score, record.score_at, now, SESSION_FLAP.halfLifeSeconds);
  return score < FLAP_DATA_FLOOR ? 0 : score;
}

/** `remoteAsn`: the session's peer AS from the node's latest snapshot (null: iBGP, or not in the snapshot). */
export function sessionReadings(
  records: readonly StoredSessionScore[],
  now: Date,
  remoteAsn: (nodeId: string, session: string) => number | null = () => null,
): ScoreReading[] {
  return records.map((r) => ({
    key: { kind: 'session', node_id: r.node_id, session: r.session },
    // A session that never flapped reads 0 here: no alert to open, and its open alert (none) is not "gone".
    score: sessionScoreAt(r, now) ?? 0,
    nodes: [r.node_id],
    remote_asn: remoteAsn(r.node_id, r.session),
  }));
}

export function prefixReadings(rows: readonly NodePrefixFlap[], now: Date): ScoreReading[] {
  const byKey = new Map<string, { prefix: string; peer_asn: number | null; scores: Map<string, number> }>();
  for (const r of rows) {
    const key = `${r.prefix} ${r.peer_asn}`;
    const entry = byKey.get(key) ?? { prefix: r.prefix, peer_asn: r.peer_asn, scores: new Map<string, number>() };
    const score = rowScoreAt(r, now.getTime());
    entry.scores.set(r.node_id, Math.max(entry.scores.get(r.node_id) ?? 0, score));
    byKey.set(key, entry);
  }
  return [...byKey.values()].map(({ prefix, peer_asn, scores }) => {
    const score = Math.max(...scores.values());
    const nodes = [...scores].filter(([, s]) => s >= PREFIX_LIST_LINE || s === score).map(([node]) => node);
    return { key: { kind: 'prefix', prefix, peer_asn }, score, nodes: nodes.sort() };
  });
}

/** The point-in-time values of a flap-stats point. */
export interface FlapCounts {
  tracked_prefixes: number;
  flapping_prefixes: number;
  flapping_sessions: number;
}

/** Distinct prefixes reported, distinct prefixes with a direction at the list line (20) or over, sessions at 3 or over. */
export function flapCounts(sessions: readonly ScoreReading[], prefixes: readonly ScoreReading[]): FlapCounts {
  const prefixOf = (r: ScoreReading) => (r.key.kind === 'prefix' ? r.key.prefix : '');
  return {
    tracked_prefixes: new Set(prefixes.map(prefixOf)).size,
    flapping_prefixes: new Set(prefixes.filter((r) => r.score >= PREFIX_LIST_LINE).map(prefixOf)).size,
    flapping_sessions: sessions.filter((r) => r.score >= SESSION_FLAP.listLine).length,
  };
}

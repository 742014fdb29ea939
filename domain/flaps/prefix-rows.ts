import type { Localization } from './localize.js';
import { FLAPPING_SINCE_MIN_S, PREFIX_ALERT_OPEN, PREFIX_LIST_LINE, rowScoreAt } from './prefix-scores.js';

/**
 * The rows of `GET /ui/fleet/prefix-flaps` (document 3, "Prefix flap row") from
 * every node's latest report: scores decayed to `now`, grouped by (prefix, peer
 * AS) for the flat form or by prefix for `group=prefix`. Pure: the stored rows,
 * the feeds, the names, the clock and every prefix's localisation
 * (domain/flaps/localize.ts, from the same snapshot) come in.
 */

/** One node's latest row for (prefix, peer_asn), as stored. */
export interface NodePrefixFlap {
  node_id: string;
  prefix: string;
  peer_asn: number | null;
  origin_asn: number | null;
  score: number;
  flaps: number | null;
  last_flap_at: string | null;
  captured_at: string;
  as_path: number[] | null;
  /** Counted by the agent since its previous report; null from an older agent. */
  announcements?: number | null;
  withdrawals?: number | null;
  changes: number | null;
  interval_s: number | null;
  alert_since: string | null;
}

export interface FlapFeed {
  node_id: string;
  feed_state: string;
  captured_at: string;
  received_at: string;
  total_changes: number | null;
}

export type Names = ReadonlyMap<number, string> | null;

/** A feed is `stale` once no report came for over 5 minutes (document 2, flap feed states). */
export const FEED_STALE_AFTER_S = 300;

export interface NodeScore {
  node_id: string;
  score: number;
  changes: number | null;
  last_change_at: string | null;
  rate_per_s: number | null;
}

interface Strength {
  max_score: number;
  total_changes: number | null;
  flapping: boolean;
  rate_per_s: number | null;
  flapping_since: string | null;
  flap_duration_s: number | null;
  nodes: NodeScore[];
}

export interface PeerDirection extends Strength {
  prefix: string;
  peer_asn: number | null;
  peer_name: string | null;
  origin_asn: number | null;
  origin_name: string | null;
  as_path: number[] | null;
  moas: boolean;
  localization: Localization | null;
}

export interface PrefixRow extends Strength {
  prefix: string;
  peer_asn: number | null;
  peer_name: string | null;
  origin_asn: number | null;
  origin_name: string | null;
  moas: boolean;
  origins: { asn: number; name: string | null }[];
  peer_count: number;
  peers: Omit<PeerDirection, 'prefix' | 'moas' | 'localization'>[];
  localization: Localization | null;
}

export interface FeedRow {
  node_id: string;
  feed_state: string;
  captured_at: string;
  total_changes: number | null;
}

/** Every prefix's localisation (a prefix not in it: null). */
export type Localizations = ReadonlyMap<string, Localization | null>;

const nameOf = (names: Names, asn: number | null) => (names === null || asn === null ? null : (names.get(asn) ?? null));

/** Sum of the known values; null when none is known (unknown is not 0). */
function knownSum(values: readonly (number | null)[]): number | null {
  const known = values.filter((v): v is number => v !== null);
  return known.length ? known.reduce((a, b) => a + b, 0) : null;
}

/** Changes per second of one node's row since its previous report; null without a baseline. */
const rateOf = (r: NodePrefixFlap): number | null => (r.changes === null || r.interval_s === null || r.interval_s <= 0 ? null : r.changes / r.interval_s);

const byScore = <T extends { score: number; node_id: string }>(a: T, b: T) => b.score - a.score || a.node_id.localeCompare(b.node_id);

/** Scores, counts, rate and alert duration of a set of node rows, decayed to `now`. Several rows of one node (several directions) make one node entry. */
function strengthOf(rows: readonly NodePrefixFlap[], now: number): Strength {
  const perNode = new Map<string, NodePrefixFlap[]>();
  for (const r of rows) perNode.set(r.node_id, [...(perNode.get(r.node_id) ?? []), r]);
  const nodes: NodeScore[] = [...perNode].map(([node_id, own]) => ({
    node_id,
    score: Math.max(...own.map((r) => rowScoreAt(r, now))),
    changes: knownSum(own.map((r) => r.flaps)),
    last_change_at: latest(own.map((r) => r.last_flap_at)),
    rate_per_s: knownSum(own.map(rateOf)),
  }));
  nodes.sort(byScore);
  const max_score = nodes[0]?.score ?? 0;
  const since = flappingSince(rows, now);
  return {
    max_score,
    total_changes: knownSum(nodes.map((n) => n.changes)),
    flapping: max_score >= PREFIX_LIST_LINE,
    rate_per_s: knownSum(nodes.map((n) => n.rate_per_s)),
    flapping_since: since === null ? null : new Date(since).toISOString(),
    flap_duration_s: since === null ? null : Math.floor((now - since) / 1000),
    nodes,
  };
}

function latest(times: readonly (string | null)[]): string | null {
  const known = times.filter((t): t is string => t !== null).sort();
  return known.at(-1) ?? null;
}

/**
 * The earliest start of alert strength among the rows still at alert strength
 * now; null in the mid band, and within FLAPPING_SINCE_MIN_S of crossing the
 * line (a key that just touched 100 is not yet "flapping since").
 */
function flappingSince(rows: readonly NodePrefixFlap[], now: number): number | null {
  const starts = rows.filter((r) => r.alert_since !== null && rowScoreAt(r, now) >= PREFIX_ALERT_OPEN).map((r) => Date.parse(r.alert_since!));
  if (!starts.length) return null;
  const since = Math.min(...starts);
  return now - since < FLAPPING_SINCE_MIN_S * 1000 ? null : since;
}

function groupBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

/** The origin ASNs a prefix resolves to across all its rows (every direction, every node), ascending. */
function originsOf(rows: readonly NodePrefixFlap[]): number[] {
  return [...new Set(rows.map((r) => r.origin_asn).filter((a): a is number => a !== null))].sort((a, b) => a - b);
}

/** The row of the highest decayed score: its origin and path stand for the direction. */
function strongest(rows: readonly NodePrefixFlap[], now: number): NodePrefixFlap {
  return rows.reduce((best, r) => (rowScoreAt(r, now) > rowScoreAt(best, now) ? r : best));
}

function direction(rows: readonly NodePrefixFlap[], names: Names, now: number): Omit<PeerDirection, 'prefix' | 'moas' | 'localization'> {
  const top = strongest(rows, now);
  return {
    peer_asn: top.peer_asn,
    peer_name: nameOf(names, top.peer_asn),
    origin_asn: top.origin_asn,
    origin_name: nameOf(names, top.origin_asn),
    as_path: top.as_path,
    ...strengthOf(rows, now),
  };
}

const directionKey = (r: NodePrefixFlap) => `${r.prefix} ${r.peer_asn}`;
const byMaxScore = <T extends { max_score: number; prefix: string }>(a: T, b: T) => b.max_score - a.max_score || a.prefix.localeCompare(b.prefix);

/** "Flap lists: max 500 rows" (document 3, Limits). */
export const FLAP_LIST_MAX_ROWS = 500;

/**
 * Flat form: one row per (prefix, peer_asn) of at least `minScore`, highest first.
 * `limit` counts prefixes, as in the grouped form: every direction of the `limit`
 * strongest prefixes (a prefix ranks by its strongest direction), so a prefix is
 * never split at the cut; at most `maxRows` rows in all.
 */
export function flatRows(
  rows: readonly NodePrefixFlap[],
  names: Names,
  now: number,
  minScore: number,
  limit: number,
  localizations: Localizations = new Map(),
  maxRows = FLAP_LIST_MAX_ROWS,
): PeerDirection[] {
  const moas = new Map([...groupBy(rows, (r) => r.prefix)].map(([prefix, own]) => [prefix, originsOf(own).length > 1]));
  const sorted = [...groupBy(rows, directionKey).values()]
    .map((own) => ({
      prefix: own[0].prefix,
      ...direction(own, names, now),
      moas: moas.get(own[0].prefix)!,
      localization: localizations.get(own[0].prefix) ?? null,
    }))
    .filter((r) => r.max_score >= minScore)
    .sort((a, b) => byMaxScore(a, b) || (a.peer_asn ?? -1) - (b.peer_asn ?? -1));
  const prefixes = new Set<string>();
  const kept: PeerDirection[] = [];
  for (const row of sorted) {
    if (!prefixes.has(row.prefix)) {
      if (prefixes.size >= limit) continue;
      prefixes.add(row.prefix);
    }
    kept.push(row);
    if (kept.length >= maxRows) break;
  }
  return kept;
}

/** Grouped form: one row per prefix with its peer directions, at least `minScore`, highest first, at most `limit` prefixes. */
export function prefixRows(
  rows: readonly NodePrefixFlap[],
  names: Names,
  now: number,
  minScore: number,
  limit: number,
  localizations: Localizations = new Map(),
): PrefixRow[] {
  return [...groupBy(rows, (r) => r.prefix).values()]
    .map((own): PrefixRow => {
      const peers = [...groupBy(own, directionKey).values()]
        .map((d) => direction(d, names, now))
        .sort((a, b) => b.max_score - a.max_score || (a.peer_asn ?? -1) - (b.peer_asn ?? -1));
      const origins = originsOf(own);
      return {
        prefix: own[0].prefix,
        peer_asn: peers[0].peer_asn,
        peer_name: peers[0].peer_name,
        origin_asn: peers[0].origin_asn,
        origin_name: peers[0].origin_name,
        moas: origins.length > 1,
        origins: origins.map((asn) => ({ asn, name: nameOf(names, asn) })),
        peer_count: peers.length,
        ...strengthOf(own, now),
        peers,
        localization: localizations.get(own[0].prefix) ?? null,
      };
    })
    .filter((r) => r.max_score >= minScore)
    .sort(byMaxScore)
    .slice(0, limit);
}

/** Feeds with `stale` for a node whose latest report is over 5 minutes old (by the server's receipt time). */
export function feedRows(feeds: readonly FlapFeed[], now: number): FeedRow[] {
  return feeds.map((f) => ({
    node_id: f.node_id,
    feed_state: now - Date.parse(f.received_at) > FEED_STALE_AFTER_S * 1000 ? 'stale' : f.feed_state,
    captured_at: f.captured_at,
    total_changes: f.total_changes,
  }));
}

/** Every ASN a set of rows names (peers and origins), for one registry lookup. */
export function asnsOf(rows: readonly NodePrefixFlap[]): number[] {
  return [...new Set(rows.flatMap((r) => [r.peer_asn, r.origin_asn]).filter((a): a is number => a !== null))];
}

/** The prefixes whose highest node score is at least `minScore`: the grouped form's selection before `limit` cuts it. */
export function selectedPrefixes(rows: readonly NodePrefixFlap[], now: number, minScore: number): string[] {
  const max = new Map<string, number>();
  for (const r of rows) max.set(r.prefix, Math.max(max.get(r.prefix) ?? 0, rowScoreAt(r, now)));
  return [...max].filter(([, score]) => score >= minScore).map(([prefix]) => prefix);
}

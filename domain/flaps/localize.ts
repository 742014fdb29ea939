import { PREFIX_LIST_LINE, rowScoreAt } from './prefix-scores.js';
import { SESSION_FLAP } from './session.js';

/**
 * Culprit localisation of flapping prefixes (document 3, "Localization
 * object"; the algorithm and its blind spots: docs/flap-localization.md). Pure:
 * every node's latest prefix rows, the eBGP session scores by node and peer AS,
 * and the clock come in, all read from one snapshot; out comes, per prefix, a
 * localisation or null (never a partial object).
 *
 * The zones, in the order they are tried:
 * - moas: the prefix resolves to different origins across peer directions.
 * - near: the flap enters at one of our sessions: every flapping direction is
 *   one peer AS at one entry node, either that session flaps or other
 *   prefixes of other origins flap only there too, and the links behind the
 *   peer do not flap as strongly from elsewhere.
 * - path: the flapping paths of prefixes of different origins share one
 *   AS-to-AS edge, seen from several vantage points (node, peer AS); null
 *   when another edge explains the same rows as well (the stored paths are
 *   the latest ones, detours included).
 * - origin: the prefix flaps at every direction it is seen from, over
 *   several entry peers: the origin AS.
 * Anything else is not locatable (null): a wrong culprit given with
 * confidence is worse than none.
 */

export type Zone = 'near' | 'origin' | 'path' | 'moas';

/** What the localisation reads of one node's stored row (prefix-rows' NodePrefixFlap has these). */
export interface FlapRow {
  node_id: string;
  prefix: string;
  peer_asn: number | null;
  origin_asn: number | null;
  score: number;
  captured_at: string;
  as_path: number[] | null;
  announcements?: number | null;
  withdrawals?: number | null;
}

type Names = ReadonlyMap<number, string> | null;

export interface LocalizationSignals {
  /** The strongest (node, peer AS) direction's share of the prefix's summed decayed scores, 0 to 1: 1 is one entry point, low is spread. */
  separation: number;
  /** Withdrawals / (announcements + withdrawals) over the flapping rows' counts since their previous report; null when no row carries counts (older agents) or none changed. */
  withdrawal_ratio: number | null;
  /** Nodes with a flapping row of the prefix, by id. */
  flap_nodes: string[];
  /** moas only: the row's `origins`; null for the other zones. */
  origins: { asn: number; name: string | null }[] | null;
  /** near only: whether the entry session's score is at the session list line (3); null for the other zones. */
  session_flapping: boolean | null;
  /** near only: the entry session's score decayed to now (null without a record); null for the other zones. */
  session_score: number | null;
}

export interface Localization {
  zone: Zone;
  confidence: number;
  culprit_asn: number | null;
  culprit_name: string | null;
  culprit_edge: [number, number] | null;
  representative_path: number[];
  signals: LocalizationSignals;
}

/** Per node, per peer AS of its eBGP sessions: the highest session flap score decayed to now (null: no session of that peer has a record). */
export type SessionScores = ReadonlyMap<string, ReadonlyMap<number, number | null>>;

/** The session scores of SessionScores from session flap rows: eBGP sessions with a remote AS, the highest score per (node, peer AS). */
export function sessionScoresOf(
  sessions: readonly { node_id: string; kind: 'ebgp' | 'ibgp'; remote_asn: number | null; flap_score: number | null }[],
): SessionScores {
  const out = new Map<string, Map<number, number | null>>();
  for (const s of sessions) {
    if (s.kind !== 'ebgp' || s.remote_asn === null) continue;
    const byPeer = out.get(s.node_id) ?? new Map<number, number | null>();
    const before = byPeer.get(s.remote_asn) ?? null;
    byPeer.set(s.remote_asn, before === null ? s.flap_score : s.flap_score === null ? before : Math.max(before, s.flap_score));
    out.set(s.node_id, byPeer);
  }
  return out;
}

/** A prefix is localised only from this decayed score on: below it a few changes say nothing about where. */
export const LOCALIZE_MIN_SCORE = 3;
/** A row is part of the prefix's flapping set when its score is at least this share of the prefix's highest. */
export const ACTIVE_SHARE = 0.25;
/** An edge is one of a prefix's own when at least this share of its flapping paths cross it. */
export const EDGE_COVERAGE = 0.5;
/** Rows of other prefixes count as the same fault when at least this share of the prefix's strongest score. */
export const COMPARABLE = 0.4;
/** Rows of another origin this close to the prefix's strongest score look like the same cadence. */
export const SIMILAR = 0.7;
/** The most a path localisation says when some flapping paths of the prefix avoid the edge. */
const PATH_PARTIAL_CAP = 0.7;
/** The most a path localisation says at all (docs/flap-localization.md, blind spots: detours). */
const PATH_CAP = 0.78;
/** A second edge crossed by this share of the best one's flapping rows makes the prefix not locatable. */
const PATH_RUNNER_UP = 0.88;
/** The share of the prefix's flapping paths the named edge must be on. */
const PATH_MIN_COVERAGE = 0.7;
/** Below this share of the most-crossed edge among the same prefixes, the edge is taken for a detour: not locatable. */
const PATH_MIN_DOMINANCE = 0.7;
const CONFIDENCE_CAP = 0.95;

interface Scored {
  row: FlapRow;
  score: number;
  /** The distinct edges of the row's AS path (none without one). */
  edges: string[];
}

/** What the cross-prefix rules need to know of every localisable prefix. */
interface Flapping {
  prefix: string;
  origin: number | null;
  active: Scored[];
  /** Set when every flapping row is one peer AS at one node. */
  entry: { node: string; peer: number } | null;
  /** Edges on at least EDGE_COVERAGE of the flapping paths (the stored path is the latest one, so a rerouted direction may show its detour), with that share. */
  mainEdges: { edge: string; coverage: number }[];
}

/** A link flaps both ways: an edge is the unordered pair (smaller ASN first in the key). */
const edgeKey = (a: number, b: number) => (a < b ? `${a}-${b}` : `${b}-${a}`);
const edgesOf = (path: readonly number[]) => path.slice(1).map((b, i) => edgeKey(path[i], b));
/** The edge as `path` crosses it, nearer AS first. */
function oriented(key: string, path: readonly number[]): [number, number] {
  const [a, b] = key.split('-').map(Number);
  return path.indexOf(a) <= path.indexOf(b) ? [a, b] : [b, a];
}
const vantageOf = (row: FlapRow) => `${row.node_id} ${row.peer_asn}`;
const round3 = (x: number) => Math.round(x * 1000) / 1000;
const clamp = (x: number) => round3(Math.min(CONFIDENCE_CAP, Math.max(0, x)));
const sorted = <T>(values: Iterable<T>, cmp?: (a: T, b: T) => number) => [...new Set(values)].sort(cmp);
const byNumber = (a: number, b: number) => a - b;

function groupBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

/** A direction's path from near to origin: the reported AS path, or for an older agent what the row names (peer, origin). */
function pathOf(row: FlapRow): number[] {
  if (row.as_path && row.as_path.length) return row.as_path;
  return [row.peer_asn, row.origin_asn].filter((a, i, all): a is number => a !== null && (i === 0 || a !== all[i - 1]));
}

/** The entry session of the flapping set: one peer AS, and one node with a session to it (or one whose session flaps). */
function entryOf(active: readonly Scored[], sessions: SessionScores): { node: string; peer: number } | null {
  const peers = sorted(active.map((a) => a.row.peer_asn));
  if (peers.length !== 1 || peers[0] === null) return null;
  const peer = peers[0];
  const nodes = sorted(active.map((a) => a.row.node_id));
  if (nodes.length === 1) return { node: nodes[0], peer };
  // Several nodes see the one direction: the entry is the only one with its own session to the peer (the others got it over iBGP)...
  const direct = nodes.filter((n) => sessions.get(n)?.has(peer));
  if (direct.length === 1) return { node: direct[0], peer };
  // ... or the only one whose session to it flaps.
  const flapping = direct.filter((n) => (sessions.get(n)?.get(peer) ?? 0) >= SESSION_FLAP.listLine);
  return flapping.length === 1 ? { node: flapping[0], peer } : null;
}

function mainEdgesOf(active: readonly Scored[]): { edge: string; coverage: number }[] {
  const withPath = active.filter((a) => a.edges.length);
  const count = new Map<string, number>();
  for (const a of withPath) for (const e of a.edges) count.set(e, (count.get(e) ?? 0) + 1);
  return [...count].map(([edge, n]) => ({ edge, coverage: n / withPath.length })).filter((e) => e.coverage >= EDGE_COVERAGE);
}

function flappingOf(prefix: string, rows: readonly FlapRow[], sessions: SessionScores, now: number): { all: Scored[]; info: Flapping } | null {
  const all = rows.map((row) => ({ row, score: rowScoreAt(row, now), edges: [...new Set(edgesOf(row.as_path ?? []))] })).sort((a, b) => b.score - a.score);
  const max = all[0]?.score ?? 0;
  if (max < LOCALIZE_MIN_SCORE) return null;
  const active = all.filter((a) => a.score >= max * ACTIVE_SHARE);
  return { all, info: { prefix, origin: all[0].row.origin_asn, active, entry: entryOf(active, sessions), mainEdges: mainEdgesOf(active) } };
}

function withdrawalRatio(active: readonly Scored[]): number | null {
  let a = 0;
  let w = 0;
  for (const { row } of active) {
    a += row.announcements ?? 0;
    w += row.withdrawals ?? 0;
  }
  return a + w > 0 ? round3(w / (a + w)) : null;
}

/** The strongest direction's share of the summed scores, per (node, peer AS). */
function separationOf(all: readonly Scored[]): number {
  const byDirection = [...groupBy(all, (a) => `${a.row.node_id} ${a.row.peer_asn}`).values()].map((d) => d.reduce((s, a) => s + a.score, 0));
  const total = byDirection.reduce((s, x) => s + x, 0);
  return total > 0 ? round3(Math.max(...byDirection) / total) : 0;
}

/**
 * Confidence factor for the evidence quality every zone shares: the strength of the flap (below the list line a
 * flap seen briefly or slowly says less, unless a flapping session vouches for it) and whether the agents sent AS paths.
 */
function evidenceFactor(active: readonly Scored[], sessionVouches = false): number {
  const strength = sessionVouches || active[0].score >= PREFIX_LIST_LINE ? 1 : 0.85;
  const withPath = active.filter((a) => a.row.as_path !== null).length / active.length;
  return strength * (0.8 + 0.2 * withPath);
}

interface Crossing {
  prefix: string;
  vantage: string;
  origin: number | null;
  score: number;
}

/** Per edge, every flapping row whose path crosses it (its vantage point (node, peer AS), origin and score), and each origin's strongest score there. */
type EdgeIndex = ReadonlyMap<string, { rows: Crossing[]; originMax: Map<number, number> }>;

function edgeIndexOf(flapping: Iterable<Flapping>): EdgeIndex {
  const out = new Map<string, { rows: Crossing[]; originMax: Map<number, number> }>();
  for (const f of flapping)
    for (const { row, score, edges } of f.active)
      for (const e of edges) {
        let at = out.get(e);
        if (!at) out.set(e, (at = { rows: [], originMax: new Map() }));
        at.rows.push({ prefix: row.prefix, vantage: vantageOf(row), origin: row.origin_asn, score });
        if (row.origin_asn !== null) at.originMax.set(row.origin_asn, Math.max(at.originMax.get(row.origin_asn) ?? 0, score));
      }
  return out;
}

/** The rows crossing `edge` at least `share` as strong as `score`: weaker churn elsewhere on a path is not the same fault. */
const crossing = (edges: EdgeIndex, edge: string, score: number, share: number) => (edges.get(edge)?.rows ?? []).filter((x) => x.score >= score * share);

interface Verdict {
  zone: Zone;
  confidence: number;
  culprit_asn: number | null;
  culprit_edge: [number, number] | null;
  representative_path: number[];
  session_flapping: boolean | null;
  session_score: number | null;
}

function moasVerdict(f: Flapping, all: readonly Scored[]): Verdict {
  // Both origins in the flapping set: the routes flip between them; one quiet: a conflict beside the flap.
  const flappingOrigins = new Set(f.active.map((a) => a.row.origin_asn).filter((o) => o !== null));
  const confidence = flappingOrigins.size >= 2 ? 0.9 : 0.7;
  return {
    zone: 'moas',
    confidence: clamp(confidence * evidenceFactor(f.active)),
    culprit_asn: null,
    culprit_edge: null,
    representative_path: pathOf(all[0].row),
    session_flapping: null,
    session_score: null,
  };
}

function nearVerdict(f: Flapping, byPrefix: ReadonlyMap<string, Flapping>, edges: EdgeIndex, all: readonly Scored[], sessions: SessionScores): Verdict | null {
  if (!f.entry) return null;
  const { node, peer } = f.entry;
  const sessionScore = sessions.get(node)?.get(peer) ?? null;
  const sessionFlapping = sessionScore !== null && sessionScore >= SESSION_FLAP.listLine;
  // Other prefixes, of other origins, whose whole flapping set enters at the same session.
  const alsoThere = new Set<number>();
  for (const other of byPrefix.values()) {
    if (other.prefix === f.prefix || other.entry?.node !== node || other.entry.peer !== peer) continue;
    if (other.origin !== null && other.origin !== f.origin) alsoThere.add(other.origin);
  }
  // Seen at other nodes without flapping there: the flap is not the origin's.
  const quietElsewhere = all.some((a) => a.row.node_id !== node && a.score < f.active[0].score * ACTIVE_SHARE);
  // A link on the paths that also flaps, as strongly, from other vantage points for prefixes of other origins: a fault
  // behind the peer looks the same from this session. Weighed against how many origins flap only here.
  const entry = `${node} ${peer}`;
  const beyond = Math.max(
    0,
    ...f.mainEdges.map(({ edge }) => {
      const elsewhere = crossing(edges, edge, f.active[0].score, COMPARABLE).filter((x) => x.vantage !== entry && x.origin !== null && x.origin !== f.origin);
      return new Set(elsewhere.map((x) => x.origin)).size;
    }),
  );
  const pathLike = beyond >= 1 && beyond * 3 >= alsoThere.size + 1;
  let confidence: number;
  if (sessionFlapping) confidence = pathLike ? 0.6 : 0.9;
  else if (pathLike) return null;
  else if (sessionScore !== null && sessionScore >= SESSION_FLAP.alertClose) confidence = 0.8;
  // The session stays up and only its routes come and go: a link right behind the peer seen from nowhere else looks the same.
  else if (alsoThere.size >= 1) confidence = 0.55 + 0.05 * Math.min(alsoThere.size, 4);
  else if (quietElsewhere) confidence = 0.5;
  else return null;
  const top = f.active.find((a) => a.row.node_id === node) ?? f.active[0];
  return {
    zone: 'near',
    confidence: clamp(confidence * evidenceFactor(f.active, sessionFlapping)),
    culprit_asn: peer,
    culprit_edge: null,
    representative_path: pathOf(top.row),
    session_flapping: sessionFlapping,
    session_score: sessionScore === null ? null : round3(sessionScore),
  };
}

/**
 * How many flapping rows cross `edge` against the most any other edge crossed by some of their prefixes has: `dominance`
 * (1: none has more) and whether another edge comes close (`rival`: at least 80 %).
 */
function dominanceOf(edge: string, edges: EdgeIndex, byPrefix: ReadonlyMap<string, Flapping>): { dominance: number; rival: boolean } {
  const cover = (e: string) => edges.get(e)?.rows.length ?? 0;
  const mine = cover(edge);
  let other = 0;
  const seen = new Set([edge]);
  for (const prefix of new Set((edges.get(edge)?.rows ?? []).map((x) => x.prefix)))
    for (const { edges: crossed } of byPrefix.get(prefix)!.active)
      for (const e of crossed) {
        if (seen.has(e)) continue;
        seen.add(e);
        other = Math.max(other, cover(e));
      }
  return { dominance: Math.min(1, mine / Math.max(other, 1)), rival: other >= 0.8 * mine };
}

function pathVerdict(f: Flapping, edges: EdgeIndex, byPrefix: ReadonlyMap<string, Flapping>): Verdict | 'unlocatable' | null {
  const candidates = f.mainEdges
    .map(({ edge, coverage }) => {
      const seen = crossing(edges, edge, f.active[0].score, COMPARABLE);
      const origins = new Set(seen.map((x) => x.origin).filter((o) => o !== null && o !== f.origin));
      return { edge, coverage, rows: seen.length, support: origins.size, vantage: new Set(seen.map((x) => x.vantage)).size };
    })
    .filter((c) => c.support >= 1 && c.vantage >= 2)
    .sort((a, b) => b.rows - a.rows || b.support - a.support || b.coverage - a.coverage);
  if (!candidates.length) return null;
  const [best, second] = candidates;
  // Two edges of the prefix's paths crossed by (nearly) as many flapping rows: the paths share a segment and the
  // broken link on it cannot be told; the prefix is not locatable rather than given a coin toss.
  if (second && second.rows >= PATH_RUNNER_UP * best.rows) return 'unlocatable';
  // Too many of the prefix's own flapping directions avoid the edge (detours, or rows without a path) to name it.
  if (best.coverage < PATH_MIN_COVERAGE) return 'unlocatable';
  const pick = best.edge;
  // Another edge crossed by more of the same prefixes' flapping rows: this one is likely a detour of that fault (the
  // stored path is the latest, so a rerouted direction shows where the route went, not where it broke).
  const { dominance, rival } = dominanceOf(pick, edges, byPrefix);
  if (dominance < PATH_MIN_DOMINANCE) return 'unlocatable';
  let confidence = (0.55 + 0.12 * Math.min(best.support, 3)) * (0.6 + 0.4 * best.coverage) * dominance;
  if (rival) confidence *= 0.75;
  // Rerouted directions show their detour: unless every flapping path of the prefix crosses the edge, another edge
  // may be the broken one.
  if (best.coverage < 1) confidence = Math.min(confidence, PATH_PARTIAL_CAP);
  if (best.vantage < 3) confidence *= 0.9;
  // Even then a detour shared by every rerouted direction can outnumber the broken link: never 0.8 for a path.
  confidence = Math.min(confidence, PATH_CAP);
  const carrier = f.active.find((a) => a.edges.includes(pick)) ?? f.active[0];
  return {
    zone: 'path',
    confidence: clamp(confidence * evidenceFactor(f.active)),
    culprit_asn: null,
    culprit_edge: oriented(pick, pathOf(carrier.row)),
    representative_path: pathOf(carrier.row),
    session_flapping: null,
    session_score: null,
  };
}

function originVerdict(f: Flapping, all: readonly Scored[], edges: EdgeIndex): Verdict | null {
  if (f.origin === null) return null;
  const peers = sorted(f.active.map((a) => a.row.peer_asn));
  const nodes = sorted(f.active.map((a) => a.row.node_id));
  if (peers.length < 2 && nodes.length < 2) return null;
  // One entry peer at several nodes: the origin or anything on the way behind that peer.
  let confidence = peers.length >= 2 ? 0.6 + 0.1 * Math.min(peers.length - 1, 3) : 0.5;
  // Seen from a direction where it does not flap: not "everywhere it is seen".
  if (all.length > f.active.length) confidence *= 0.75;
  // Prefixes of other origins flapping as strongly over some of the same links: more likely one cause on the way
  // (whose edge the detours hide) than two origins flapping at once.
  const coFlapping = new Set<number>();
  for (const e of new Set(f.active.flatMap((a) => a.edges)))
    for (const [origin, max] of edges.get(e)?.originMax ?? []) if (origin !== f.origin && max >= f.active[0].score * SIMILAR) coFlapping.add(origin);
  if (coFlapping.size) confidence *= coFlapping.size >= 3 ? 0.6 : 0.75;
  return {
    zone: 'origin',
    confidence: clamp(confidence * evidenceFactor(f.active)),
    culprit_asn: f.origin,
    culprit_edge: null,
    representative_path: pathOf(f.active[0].row),
    session_flapping: null,
    session_score: null,
  };
}

/**
 * Every prefix's localisation (null when not locatable or below
 * LOCALIZE_MIN_SCORE), from all the rows of the snapshot: the cross-prefix
 * rules look at every flapping prefix, listed or not. Names come from `names`
 * (null without a registry).
 */
export function localizePrefixes(rows: readonly FlapRow[], sessions: SessionScores, names: Names, now: number): Map<string, Localization | null> {
  const byPrefixRows = groupBy(rows, (r) => r.prefix);
  const scored = new Map<string, { all: Scored[]; info: Flapping }>();
  for (const [prefix, own] of byPrefixRows) {
    const f = flappingOf(prefix, own, sessions, now);
    if (f) scored.set(prefix, f);
  }
  const byPrefix = new Map([...scored].map(([p, f]) => [p, f.info]));
  const edges = edgeIndexOf(byPrefix.values());
  const out = new Map<string, Localization | null>();
  for (const [prefix, own] of byPrefixRows) {
    const s = scored.get(prefix);
    if (!s) {
      out.set(prefix, null);
      continue;
    }
    const origins = sorted(
      own.map((r) => r.origin_asn).filter((a): a is number => a !== null),
      byNumber,
    );
    const moas = origins.length > 1;
    const path = () => pathVerdict(s.info, edges, byPrefix);
    const found = moas ? moasVerdict(s.info, s.all) : (nearVerdict(s.info, byPrefix, edges, s.all, sessions) ?? path() ?? originVerdict(s.info, s.all, edges));
    const verdict = found === 'unlocatable' ? null : found;
    out.set(
      prefix,
      verdict && {
        zone: verdict.zone,
        confidence: verdict.confidence,
        culprit_asn: verdict.culprit_asn,
        culprit_name: verdict.culprit_asn === null || names === null ? null : (names.get(verdict.culprit_asn) ?? null),
        culprit_edge: verdict.culprit_edge,
        representative_path: verdict.representative_path,
        signals: {
          separation: separationOf(s.all),
          withdrawal_ratio: withdrawalRatio(s.info.active),
          flap_nodes: sorted(s.info.active.map((a) => a.row.node_id)),
          origins: moas ? origins.map((asn) => ({ asn, name: names === null ? null : (names.get(asn) ?? null) })) : null,
          session_flapping: verdict.session_flapping,
          session_score: verdict.session_score,
        },
      },
    );
  }
  return out;
}

/** The localisation with its names from `names` (null without a registry): the culprit's and the moas origins'. */
export function withNames(l: Localization, names: Names): Localization {
  const name = (asn: number) => (names === null ? null : (names.get(asn) ?? null));
  return {
    ...l,
    culprit_name: l.culprit_asn === null ? null : name(l.culprit_asn),
    signals: { ...l.signals, origins: l.signals.origins && l.signals.origins.map(({ asn }) => ({ asn, name: name(asn) })) },
  };
}

/** Counts of the located prefixes by zone. */
export function localizationSummary(localizations: Iterable<Localization | null>): Record<Zone, number> {
  const summary: Record<Zone, number> = { near: 0, origin: 0, path: 0, moas: 0 };
  for (const l of localizations) if (l) summary[l.zone]++;
  return summary;
}

/** The culprit ASNs of some localisations, for one registry lookup. */
export function culpritAsns(localizations: Iterable<Localization | null>): number[] {
  const asns = new Set<number>();
  for (const l of localizations) if (l?.culprit_asn != null) asns.add(l.culprit_asn);
  return [...asns];
}

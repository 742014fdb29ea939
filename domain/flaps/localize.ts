import { decayTo, PREFIX_LIST_LINE } from './prefix-scores.js';
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
 *   one peer AS at one entry node, and either that session flaps or other
 *   prefixes of other origins flap only there too.
 * - path: the flapping paths of prefixes of different origins share one
 *   AS-to-AS edge, seen from several vantage points (node, peer AS).
 * - origin: the prefix flaps at every direction it is seen from, over
 *   several entry peers: the origin AS.
 * Anything else is not locatable (null): a wrong culprit given with
 * confidence is worse than none.
 */

export type Zone = 'near' | 'origin' | 'path' | 'moas';

/** What the localisation reads of one node's stored row (prefix-rows' FlapRow has these). */
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
const CONFIDENCE_CAP = 0.95;

interface Scored {
  row: FlapRow;
  score: number;
}

/** What the cross-prefix rules need to know of every localisable prefix. */
interface Flapping {
  prefix: string;
  origin: number | null;
  active: Scored[];
  /** Set when every flapping row is one peer AS at one node. */
  entry: { node: string; peer: number } | null;
  /** Edges present in every flapping path that carries one (none when no row has an AS path). */
  commonEdges: string[];
}

const edgeKey = (a: number, b: number) => `${a}>${b}`;
const edgeOf = (key: string): [number, number] => key.split('>').map(Number) as [number, number];
const edgesOf = (path: readonly number[]) => path.slice(1).map((b, i) => edgeKey(path[i], b));
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

function commonEdgesOf(active: readonly Scored[]): string[] {
  const paths = active.map((a) => a.row.as_path).filter((p): p is number[] => p !== null && p.length >= 2);
  if (!paths.length) return [];
  const [first, ...rest] = paths.map((p) => new Set(edgesOf(p)));
  return [...first].filter((e) => rest.every((s) => s.has(e)));
}

function flappingOf(prefix: string, rows: readonly FlapRow[], sessions: SessionScores, now: number): { all: Scored[]; info: Flapping } | null {
  const all = rows.map((row) => ({ row, score: decayTo(row.score, Date.parse(row.captured_at), now) })).sort((a, b) => b.score - a.score);
  const max = all[0]?.score ?? 0;
  if (max < LOCALIZE_MIN_SCORE) return null;
  const active = all.filter((a) => a.score >= max * ACTIVE_SHARE);
  return { all, info: { prefix, origin: all[0].row.origin_asn, active, entry: entryOf(active, sessions), commonEdges: commonEdgesOf(active) } };
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

/** Confidence factor for the evidence quality every zone shares: the strength of the flap and whether the agents sent AS paths. */
function evidenceFactor(active: readonly Scored[]): number {
  const strength = active[0].score >= PREFIX_LIST_LINE ? 1 : 0.9;
  const withPath = active.filter((a) => a.row.as_path !== null).length / active.length;
  return strength * (0.8 + 0.2 * withPath);
}

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

function nearVerdict(f: Flapping, byPrefix: ReadonlyMap<string, Flapping>, all: readonly Scored[], sessions: SessionScores): Verdict | null {
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
  let confidence: number;
  if (sessionFlapping) confidence = 0.9;
  else if (alsoThere.size >= 1) confidence = 0.6 + 0.1 * Math.min(alsoThere.size, 3);
  else if (quietElsewhere) confidence = 0.55;
  else return null;
  const top = f.active.find((a) => a.row.node_id === node) ?? f.active[0];
  return {
    zone: 'near',
    confidence: clamp(confidence * evidenceFactor(f.active)),
    culprit_asn: peer,
    culprit_edge: null,
    representative_path: pathOf(top.row),
    session_flapping: sessionFlapping,
    session_score: sessionScore === null ? null : round3(sessionScore),
  };
}

function pathVerdict(f: Flapping, byPrefix: ReadonlyMap<string, Flapping>): Verdict | null {
  if (!f.commonEdges.length) return null;
  const candidates = f.commonEdges.map((edge) => {
    const origins = new Set<number>();
    const vantage = new Set(f.active.map((a) => `${a.row.node_id} ${a.row.peer_asn}`));
    for (const other of byPrefix.values()) {
      if (other.prefix === f.prefix || other.origin === null || other.origin === f.origin || !other.commonEdges.includes(edge)) continue;
      origins.add(other.origin);
      for (const a of other.active) vantage.add(`${a.row.node_id} ${a.row.peer_asn}`);
    }
    return { edge, support: origins.size, vantage: vantage.size };
  });
  const supported = candidates.filter((c) => c.support >= 1 && c.vantage >= 2);
  if (!supported.length) return null;
  supported.sort((a, b) => b.support - a.support || b.vantage - a.vantage);
  const best = supported[0];
  const tied = supported.filter((c) => c.support === best.support && c.vantage === best.vantage);
  // Several edges explain the same flapping set (the paths share a segment): the deepest, with the doubt in the confidence.
  const pick =
    tied.length > 1
      ? deepest(
          tied.map((c) => c.edge),
          f,
        )
      : best.edge;
  let confidence = 0.55 + 0.12 * Math.min(best.support, 3);
  if (best.vantage < 3) confidence *= 0.9;
  if (tied.length > 1) confidence *= 0.7;
  const edge = edgeOf(pick);
  const carrier = f.active.find((a) => a.row.as_path && edgesOf(a.row.as_path).includes(pick)) ?? f.active[0];
  return {
    zone: 'path',
    confidence: clamp(confidence * evidenceFactor(f.active)),
    culprit_asn: null,
    culprit_edge: edge,
    representative_path: pathOf(carrier.row),
    session_flapping: null,
    session_score: null,
  };
}

/** The edge nearest to the origin on the strongest flapping path. */
function deepest(edges: readonly string[], f: Flapping): string {
  const path = f.active.find((a) => a.row.as_path && a.row.as_path.length >= 2)!.row.as_path!;
  const order = edgesOf(path);
  return [...edges].sort((a, b) => order.indexOf(b) - order.indexOf(a))[0];
}

function originVerdict(f: Flapping, all: readonly Scored[]): Verdict | null {
  if (f.origin === null) return null;
  const peers = sorted(f.active.map((a) => a.row.peer_asn));
  const nodes = sorted(f.active.map((a) => a.row.node_id));
  if (peers.length < 2 && nodes.length < 2) return null;
  // One entry peer at several nodes: the origin or anything on the way behind that peer.
  let confidence = peers.length >= 2 ? 0.6 + 0.1 * Math.min(peers.length - 1, 3) : 0.5;
  // Seen from a direction where it does not flap: not "everywhere it is seen".
  if (all.length > f.active.length) confidence *= 0.75;
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
    const verdict = moas
      ? moasVerdict(s.info, s.all)
      : (nearVerdict(s.info, byPrefix, s.all, sessions) ?? pathVerdict(s.info, byPrefix) ?? originVerdict(s.info, s.all));
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

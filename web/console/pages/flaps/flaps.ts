/**
 * The flap views' lines and labels (document 3, "Prefix flap row", "Localization
 * object", "Other flap records"; the records are the server's `PrefixFlapRow`,
 * `PrefixFlapDirection`), and the words the console explains a localisation
 * with (docs/flap-localization.md).
 */
import type { PrefixFlapDirection, PrefixFlapRow } from '../../../shared/api.js';
import { num } from '../../../shared/format.js';

/** Document 3, "Flap scores". */
export const PREFIX_LINES = { list: 20, open: 100, close: 50 } as const;
export const SESSION_LINES = { list: 3, open: 3, close: 1.5 } as const;
/** A prefix is localised only from this score on (docs/flap-localization.md). */
export const LOCALIZE_MIN_SCORE = 3;
/** A direction belongs to the prefix's flapping set from this share of its strongest score on. */
const ACTIVE_SHARE = 0.25;

export const ZONE_LABEL: Record<NonNullable<PrefixFlapRow['localization']>['zone'], string> = {
  near: 'near (entry session)',
  origin: 'origin AS',
  path: 'path (a link on the way)',
  moas: 'MOAS (several origins)',
};

/** `AS4242420001 (NAME)`. */
export function asLabel(asn: number | null | undefined, name?: string | null): string {
  if (asn === null || asn === undefined) return '—';
  return name ? `AS${asn} (${name})` : `AS${asn}`;
}

export const score = (n: number | null | undefined) => num(n, 1);
export const confidence = (c: number) => num(c, 2);
export const changesPerSecond = (n: number | null | undefined) => (n === null || n === undefined ? '—' : `${num(n, n < 1 ? 3 : 1)} changes/s`);
const percent = (x: number) => `${Math.round(x * 100)} %`;

function list(items: string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/** How sure, in a word. */
function lead(c: number): string {
  return c >= 0.8 ? 'Most likely' : c >= 0.6 ? 'Probably' : 'Possibly';
}

/**
 * The localisation of `row` in words. `row` is the prefix's row (grouped rows
 * carry every direction, which sharpens the wording; a flat row only its own).
 */
export function explain(
  row: Omit<PrefixFlapDirection, 'as_path' | 'localization'> & Partial<Pick<PrefixFlapRow, 'peers' | 'origins'>>,
  loc: PrefixFlapRow['localization'],
): {
  /** The whole sentence: who, how sure, why. */
  sentence: string;
  /** The culprit, short (`AS4242420001`, `the link AS1 – AS2`), or null. */
  culprit: string | null;
  /** One line per piece of evidence. */
  evidence: string[];
} {
  if (!loc) {
    const sentence =
      row.max_score < LOCALIZE_MIN_SCORE
        ? `Not located: the flap is too weak to tell where it comes from (score ${score(row.max_score)}; the fleet locates a prefix from a score of ${LOCALIZE_MIN_SCORE}).`
        : row.nodes.length <= 1 && (row.peers ?? [row]).length <= 1
          ? 'Not located: it is seen from one vantage point only (one peer AS at one node) with a steady session, so it could be the peer, a link behind it or the origin.'
          : 'Not located: the evidence does not single out one place (several links on the way are equally likely, or the flapping paths are detours).';
    return { sentence, culprit: null, evidence: [] };
  }
  const s = loc.signals;
  const c = confidence(loc.confidence);
  const nodes = s.flap_nodes;
  const flappingDirections = (row.peers ?? [row]).filter((d) => d.max_score >= row.max_score * ACTIVE_SHARE);
  const quietDirections = (row.peers ?? []).filter((d) => d.max_score < row.max_score * ACTIVE_SHARE);
  const quietNodes = row.nodes.filter((n) => !nodes.includes(n.node_id)).map((n) => n.node_id);
  const evidence: string[] = [];
  let sentence: string;
  let culprit: string | null;

  switch (loc.zone) {
    case 'near': {
      culprit = asLabel(loc.culprit_asn, loc.culprit_name);
      const at = nodes.length === 1 ? `at ${nodes[0]}` : `(seen at ${list(nodes)})`;
      let why: string;
      if (s.session_flapping)
        why = `the flap enters the fleet only through the session to it ${at}, and that BGP session flaps itself (session score ${score(s.session_score)})`;
      else if (s.session_score !== null && s.session_score >= SESSION_LINES.close)
        why = `the flap enters the fleet only through the session to it ${at}, and that session is unsteady (session score ${score(s.session_score)}, flapping from ${SESSION_LINES.list})`;
      else if (quietNodes.length)
        why = `the flap enters the fleet only through this peer ${at}, while ${list(quietNodes)} ${quietNodes.length === 1 ? 'sees' : 'see'} the prefix without it flapping`;
      else why = `the flap enters the fleet only through this peer ${at}, where prefixes of other origins flap too while the session stays up`;
      sentence = `${lead(loc.confidence)} the peer ${culprit} (confidence ${c}): ${why}.`;
      if (quietDirections.length)
        evidence.push(
          `${list(quietDirections.map((d) => `${asLabel(d.peer_asn)} at ${list(d.nodes.map((n) => n.node_id))}`))} ${quietDirections.length === 1 ? 'sees' : 'see'} the prefix flap far less (under a quarter of the top score): the flap is not the origin's.`,
        );
      evidence.push(
        s.session_score === null
          ? 'The entry session has no flap record: the session itself looks steady; its routes come and go.'
          : s.session_flapping
            ? `The entry session's own flap score is ${score(s.session_score)} (flapping from ${SESSION_LINES.list}).`
            : `The entry session's own flap score is ${score(s.session_score)}: below the flapping line ${SESSION_LINES.list}, so it is the routes, not the session, that come and go.`,
      );
      break;
    }
    case 'origin': {
      culprit = asLabel(loc.culprit_asn, loc.culprit_name);
      const peers = [...new Set(flappingDirections.map((d) => d.peer_asn).filter((p): p is number => p !== null))];
      let why: string;
      if (row.peers && peers.length >= 2)
        why = `every peer direction sees the flap with the same origin: it comes in over ${peers.length} peer ASes (${list(peers.map((p) => `AS${p}`))}) at ${list(nodes)}`;
      else if (row.peers && peers.length === 1)
        why = `it flaps over one peer AS (AS${peers[0]}) at ${nodes.length} nodes (${list(nodes)}), with the same origin: the origin, or something on the way behind that peer`;
      else why = `the prefix flaps with the same origin from the directions it is seen from (${list(nodes)})`;
      sentence = `${lead(loc.confidence)} the origin ${culprit} (confidence ${c}): ${why}.`;
      if (quietDirections.length)
        evidence.push(
          `${quietDirections.length} direction${quietDirections.length === 1 ? ' sees' : 's see'} the prefix without it flapping (${list(quietDirections.map((d) => asLabel(d.peer_asn)))}), which lowers the confidence.`,
        );
      break;
    }
    case 'path': {
      const [a, b] = loc.culprit_edge ?? [null, null];
      culprit = `the link AS${a} – AS${b}`;
      sentence = `${lead(loc.confidence)} the link between AS${a} and AS${b} (confidence ${c}): the flapping paths of this prefix and of prefixes of other origins cross that link, seen from several vantage points (node, peer AS). AS${a} is the side nearer to us.`;
      evidence.push('A path answer never reaches 0.8: a rerouted direction shows its detour, not the broken link, so the stored paths can hide it.');
      break;
    }
    case 'moas': {
      const origins = s.origins ?? row.origins ?? [];
      culprit = null;
      const flappingOrigins = new Set(flappingDirections.map((d) => d.origin_asn).filter((o) => o !== null));
      const how = flappingOrigins.size >= 2 ? 'and the routes flip between them' : "while one origin's directions are quiet: a conflict beside the flap";
      sentence = `${lead(loc.confidence)} a MOAS conflict (confidence ${c}): the prefix is announced by ${origins.length} origins, ${list(origins.map((o) => asLabel(o.asn, o.name)))}, ${how}. No single AS is named: check which origin is entitled to the prefix in the registry.`;
      break;
    }
  }

  evidence.push(
    s.separation >= 0.9
      ? `${percent(s.separation)} of the flap score comes from one direction (node, peer AS): one entry point.`
      : s.separation < 0.5
        ? `The strongest direction (node, peer AS) carries only ${percent(s.separation)} of the flap score: spread over many directions.`
        : `The strongest direction (node, peer AS) carries ${percent(s.separation)} of the flap score.`,
  );
  evidence.push(
    s.withdrawal_ratio === null
      ? 'No announcement and withdrawal counts (older agents, or nothing changed since the last report).'
      : s.withdrawal_ratio >= 0.5
        ? `${percent(s.withdrawal_ratio)} of the route changes are withdrawals: the route disappears and comes back, as when a session or link goes down.`
        : `${percent(s.withdrawal_ratio)} of the route changes are withdrawals: mostly re-announcements with another path or attributes.`,
  );
  return { sentence, culprit, evidence };
}

/** `AS1 → AS2 → AS3`. */
export function pathText(path: readonly number[] | null | undefined): string {
  return path && path.length ? path.map((a) => `AS${a}`).join(' → ') : '—';
}

/** The mitigations page (another engineer's), prefilled. */
export const mitigateHref = (q: { prefix?: string; asn?: number }) =>
  q.prefix ? `./fleet/mitigations?prefix=${encodeURIComponent(q.prefix)}` : `./fleet/mitigations?asn=${q.asn}`;
export const nodeHref = (id: string) => `./nodes/${encodeURIComponent(id)}`;
export const peerHref = (asn: number) => `./flaps/peers/${asn}`;

import { ZONES, type GroundTruth, type Zone } from './scenarios.js';

/**
 * Scoring of the flap lab: the localisations the server gave for the faulted
 * prefixes against the ground truth. Pure.
 *
 * - A scenario's answer is the localisation of its primary row: the faulted
 *   prefix with the highest `max_score` in the response (the row an operator
 *   looks at first). The scenario is *located* when that row has a
 *   localisation, *right* when zone and culprit are the truth's (near and
 *   origin: `culprit_asn`; path: `culprit_edge` as a link, either order;
 *   moas: `signals.origins` holds both origins).
 * - Every localisation with confidence >= 0.8 that is wrong counts as a
 *   confident wrong culprit, on faulted rows and on noise rows (churn with a
 *   known cause) alike.
 * - Prefix level: every faulted row listed, located and right.
 */

/** The localisation object of a prefix row as the contract gives it (fields the lab reads). */
export interface Localization {
  zone: string;
  confidence: number;
  culprit_asn: number | null;
  culprit_edge: number[] | null;
  signals?: { origins?: (number | { asn: number })[] | null } | null;
}

export interface ListedRow {
  prefix: string;
  max_score: number;
  localization: Localization | null;
}

export interface ScenarioOutcome {
  index: number;
  truth: GroundTruth;
  description: string;
  /** Faulted prefixes (the simulation's ground truth) and the rows listed for them. */
  faulted: string[];
  rows: ListedRow[];
  /** Rows of noise prefixes with their own truth. */
  noise: { row: ListedRow; truth: GroundTruth }[];
}

export const CONFIDENT = 0.8;

export function isRight(loc: Localization, truth: GroundTruth): boolean {
  if (loc.zone !== truth.zone) return false;
  switch (truth.zone) {
    case 'near':
    case 'origin':
      return loc.culprit_asn === truth.culprit_asn;
    case 'path': {
      const [a, b] = truth.culprit_edge!;
      const e = loc.culprit_edge ?? [];
      return e.length === 2 && ((e[0] === a && e[1] === b) || (e[0] === b && e[1] === a));
    }
    case 'moas': {
      const given = new Set((loc.signals?.origins ?? []).map((o) => (typeof o === 'number' ? o : o.asn)));
      return truth.origins!.every((o) => given.has(o));
    }
  }
}

/** What a localisation says, in a few words (failure listings). */
export function describe(loc: Localization | null): string {
  if (!loc) return 'not located';
  const culprit =
    loc.zone === 'path'
      ? `edge ${JSON.stringify(loc.culprit_edge)}`
      : loc.zone === 'moas'
        ? `origins ${JSON.stringify(loc.signals?.origins ?? null)}`
        : `AS${loc.culprit_asn}`;
  return `${loc.zone} ${culprit} (confidence ${loc.confidence.toFixed(2)})`;
}

export interface ScenarioScore {
  index: number;
  zone: Zone;
  /** The primary row is in the response. */
  listed: boolean;
  located: boolean;
  right: boolean;
  primary: ListedRow | null;
  wrongConfident: { prefix: string; said: string; truth: GroundTruth }[];
  rows: { listed: number; located: number; right: number };
  noise: { listed: number; located: number; right: number; wrongConfident: number };
  /** Noise rows localised wrongly, at any confidence. */
  noiseWrong: { prefix: string; said: string; truth: GroundTruth }[];
}

export function scoreScenario(o: ScenarioOutcome): ScenarioScore {
  const primary = [...o.rows].sort((a, b) => b.max_score - a.max_score || a.prefix.localeCompare(b.prefix))[0] ?? null;
  const located = o.rows.filter((r) => r.localization);
  const right = located.filter((r) => isRight(r.localization!, o.truth));
  const wrongConfident = [
    ...located.filter((r) => r.localization!.confidence >= CONFIDENT && !isRight(r.localization!, o.truth)).map((r) => ({ row: r, truth: o.truth })),
    ...o.noise.filter(({ row, truth }) => row.localization && row.localization.confidence >= CONFIDENT && !isRight(row.localization, truth)),
  ].map(({ row, truth }) => ({ prefix: row.prefix, said: describe(row.localization), truth }));
  const noiseLocated = o.noise.filter((n) => n.row.localization);
  return {
    index: o.index,
    zone: o.truth.zone,
    listed: primary !== null,
    located: primary?.localization != null,
    right: primary?.localization != null && isRight(primary.localization, o.truth),
    primary,
    wrongConfident,
    rows: { listed: o.rows.length, located: located.length, right: right.length },
    noise: {
      listed: o.noise.length,
      located: noiseLocated.length,
      right: noiseLocated.filter((n) => isRight(n.row.localization!, n.truth)).length,
      wrongConfident: o.noise.filter(({ row, truth }) => row.localization && row.localization.confidence >= CONFIDENT && !isRight(row.localization, truth))
        .length,
    },
    noiseWrong: noiseLocated
      .filter((n) => !isRight(n.row.localization!, n.truth))
      .map((n) => ({ prefix: n.row.prefix, said: describe(n.row.localization), truth: n.truth })),
  };
}

export interface Figures {
  scenarios: number;
  listed: number;
  located: number;
  right: number;
  /** located / scenarios */
  recall: number | null;
  /** right / located */
  precision: number | null;
  /** Localisations with confidence >= 0.8 that name a wrong zone or culprit (faulted and noise rows). */
  wrong_confident: number;
  prefix_rows: number;
  prefix_recall: number | null;
  prefix_precision: number | null;
  noise_rows: number;
  noise_located: number;
  noise_precision: number | null;
  /** Mean confidence of the right and of the wrong scenario answers (calibration). */
  confidence_right_mean: number | null;
  confidence_wrong_mean: number | null;
}

const share = (part: number, whole: number) => (whole === 0 ? null : Math.round((part / whole) * 1000) / 1000);

export function figures(scores: readonly ScenarioScore[]): Figures {
  const sum = (f: (s: ScenarioScore) => number) => scores.reduce((a, s) => a + f(s), 0);
  const located = sum((s) => +s.located);
  const right = sum((s) => +s.right);
  const rows = sum((s) => s.rows.listed);
  const rowsLocated = sum((s) => s.rows.located);
  const noiseLocated = sum((s) => s.noise.located);
  return {
    scenarios: scores.length,
    listed: sum((s) => +s.listed),
    located,
    right,
    recall: share(located, scores.length),
    precision: share(right, located),
    wrong_confident: sum((s) => s.wrongConfident.length),
    prefix_rows: rows,
    prefix_recall: share(rowsLocated, rows),
    prefix_precision: share(
      sum((s) => s.rows.right),
      rowsLocated,
    ),
    noise_rows: sum((s) => s.noise.listed),
    noise_located: noiseLocated,
    noise_precision: share(
      sum((s) => s.noise.right),
      noiseLocated,
    ),
    confidence_right_mean: meanConfidence(scores.filter((s) => s.right)),
    confidence_wrong_mean: meanConfidence(scores.filter((s) => s.located && !s.right)),
  };
}

function meanConfidence(scores: readonly ScenarioScore[]): number | null {
  if (scores.length === 0) return null;
  return Math.round((scores.reduce((a, s) => a + s.primary!.localization!.confidence, 0) / scores.length) * 1000) / 1000;
}

/** Figures per fault zone and over all scenarios. */
export function figuresByZone(scores: readonly ScenarioScore[]): { zone: Zone | 'all'; figures: Figures }[] {
  return [...ZONES.map((zone) => ({ zone, figures: figures(scores.filter((s) => s.zone === zone)) })), { zone: 'all' as const, figures: figures(scores) }];
}

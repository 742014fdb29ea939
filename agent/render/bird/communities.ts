import type { BgpSessionState } from '../../../domain/desired-state/schema.js';

/**
 * dn42 link communities (64511, N), as the dn42 BIRD 2 guide defines them:
 * latency 1..9, bandwidth 21..29, crypto 31..34. A route keeps one value per
 * kind, the worst along its path: the highest latency, the lowest bandwidth
 * and the lowest crypto. Each session adds its own link's values on import and
 * on export; a value the session does not set is left alone.
 */

interface Kind {
  fn: string;
  min: number;
  max: number;
  /** Which value survives when a route carries several. */
  keep: 'highest' | 'lowest';
}

export const LATENCY: Kind = { fn: 'dn42_latency', min: 1, max: 9, keep: 'highest' };
export const BANDWIDTH: Kind = { fn: 'dn42_bandwidth', min: 21, max: 29, keep: 'lowest' };
export const CRYPTO: Kind = { fn: 'dn42_crypto', min: 31, max: 34, keep: 'lowest' };

/** `function dn42_latency(int value)`: adds the link's value, keeps the worst, returns it. */
function kindFunction(kind: Kind): string[] {
  const order = Array.from({ length: kind.max - kind.min + 1 }, (_, i) => (kind.keep === 'highest' ? kind.max - i : kind.min + i));
  const checks = order.slice(0, -1).map((v) => {
    const others = kind.keep === 'highest' ? `${kind.min}..${v - 1}` : `${v + 1}..${kind.max}`;
    return `\tif (64511, ${v}) ~ bgp_community then { bgp_community.delete([(64511, ${others})]); return ${v}; }`;
  });
  return [`function ${kind.fn}(int value) {`, '\tbgp_community.add((64511, value));', ...checks, `\treturn ${order[order.length - 1]};`, '}'];
}

export function communityFunctions(): string[] {
  return [
    '# dn42 link communities (64511, N): latency 1..9 (highest wins), bandwidth 21..29 and crypto 31..34 (lowest wins).',
    ...kindFunction(LATENCY),
    '',
    ...kindFunction(BANDWIDTH),
    '',
    ...kindFunction(CRYPTO),
  ];
}

/** Statements of a session's filter that apply its link's communities. */
export function linkCommunityStatements(session: Pick<BgpSessionState, 'link_latency' | 'bandwidth' | 'crypto'>): string[] {
  const pairs: [Kind, number | null][] = [
    [LATENCY, session.link_latency],
    [BANDWIDTH, session.bandwidth],
    [CRYPTO, session.crypto],
  ];
  return pairs.filter(([, value]) => value !== null).map(([kind, value]) => `${kind.fn}(${value});`);
}

/** The origin region community (64511, 41..57) a node stamps on the prefixes it originates. */
export const regionCommunity = (region: number): string => `(64511, ${region})`;

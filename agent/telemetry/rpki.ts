import { RoaIndex, type RoaSet } from '../../domain/rpki/roa.js';
import { rpkiModeOf } from '../render/index.js';
import { readHeldRoas } from '../rpki/held.js';
import type { AgentRuntime } from '../runtime.js';
import { stateLayout } from '../state/layout.js';
import type { ObservedRoute } from './routes.js';

/**
 * Each route's RPKI state against the ROA set the node rendered into BIRD's
 * ROA tables (RFC 6811, `RoaIndex`, the same answers as BIRD's `roa_check`).
 * A route without an AS path (our originations, the fleet's routes over iBGP)
 * is checked with the node's own ASN, which originates it. Pure.
 */
export function withRpkiStates(routes: readonly ObservedRoute[], roas: RoaSet, ownAsn: number): ObservedRoute[] {
  const index = new RoaIndex(roas.roas);
  return routes.map((r) => ({ ...r, rpki: index.state(r.prefix, r.local ? ownAsn : r.origin_asn) }));
}

/**
 * The routing table's RPKI part: states observed when the node in force loads
 * ROA tables (`bird.rpki.mode` not `off`) and holds a ROA set; otherwise
 * `rpki_observed: false` and every `rpki` null (unknown, not "not found").
 */
export async function rpkiObservation(rt: AgentRuntime, routes: ObservedRoute[]): Promise<{ rpki_observed: boolean; routes: ObservedRoute[] }> {
  const desired = rt.applied().desired;
  if (!desired || rpkiModeOf(desired) === 'off') return { rpki_observed: false, routes };
  const held = await readHeldRoas(stateLayout(rt.stateDir).node(rt.nodeId).roas, rt.logger);
  if (!held) return { rpki_observed: false, routes };
  return { rpki_observed: true, routes: withRpkiStates(routes, held.set, desired.node.asn) };
}

import { IllegalState, NotFound } from '../../domain/errors.js';
import type { LiveNode, NodeState } from '../../domain/node/state.js';

/**
 * The nodes a mitigation names, in the order given without repeats: an
 * unknown one is 404 `unknown node <id>`, a decommissioned one 409
 * `node <id> is decommissioned` (it runs the empty state, so a block there
 * would protect nothing and only come back on recommission).
 */
export function namedNodes(states: ReadonlyMap<string, NodeState>, ids: readonly string[]): LiveNode[] {
  return [...new Set(ids)].map((id) => {
    const state = states.get(id);
    if (state?.status !== 'Live') throw new NotFound(`unknown node ${id}`);
    if (state.lifecycle === 'decommissioned') throw new IllegalState(`node ${id} is decommissioned`);
    return state;
  });
}

import { live } from '../node/decide.js';
import type { NodeEvent } from '../node/events.js';
import type { LiveNode, NodeState } from '../node/state.js';
import { DEFAULT_AUTOPEERING_POLICY, patchedPolicy, replacedPolicy, samePolicy, type AutopeeringPolicy, type AutopeeringPolicyIn } from './policy.js';

/** PUT replaces the whole policy (omitted fields back to defaults); PATCH changes only the given fields. */
export interface PolicyChange {
  kind: 'replace' | 'patch';
  policy: AutopeeringPolicyIn;
}

/** The node's policy, the defaults when nobody set one. */
export function policyOf(node: LiveNode): AutopeeringPolicy {
  return node.autopeering ?? { ...DEFAULT_AUTOPEERING_POLICY };
}

/**
 * Decides a policy write on the node stream: an unknown node is 404 `unknown
 * node <id>`; a change that leaves the policy as it is records nothing. The
 * event carries the whole resulting policy, so a fold never needs the history
 * of partial changes.
 */
export function decideAutopeeringPolicy(state: NodeState, nodeId: string, change: PolicyChange): NodeEvent[] {
  const node = live(state, nodeId);
  const current = policyOf(node);
  const next = change.kind === 'replace' ? replacedPolicy(change.policy) : patchedPolicy(current, change.policy);
  if (samePolicy(current, next)) return [];
  return [{ type: 'AutopeeringPolicySet', data: { node_id: nodeId, policy: next } }];
}

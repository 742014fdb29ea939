import { expect } from 'chai';
import { fold } from '../../../domain/decider.js';
import { NotFound } from '../../../domain/errors.js';
import { decideAutopeeringPolicy, policyOf, type PolicyChange } from '../../../domain/autopeering/policy-decide.js';
import { DEFAULT_AUTOPEERING_POLICY, type AutopeeringPolicy } from '../../../domain/autopeering/policy.js';
import { nodeDecider } from '../../../domain/node/decide.js';
import type { NodeEvent } from '../../../domain/node/events.js';
import type { LiveNode } from '../../../domain/node/state.js';

const created: NodeEvent = { type: 'NodeCreated', data: { node_id: 'fra1', fields: { asn: 4242420001, router_id: '172.20.0.1' } } };
const set = (policy: AutopeeringPolicy): NodeEvent => ({ type: 'AutopeeringPolicySet', data: { node_id: 'fra1', policy } });
const open: AutopeeringPolicy = { ...DEFAULT_AUTOPEERING_POLICY, enabled: true, endpoint_host: 'fra1.example.net', max_sessions: 10, notice: 'hi' };

/** given node events, when a policy change, then events. */
const decide = (history: NodeEvent[], change: PolicyChange, nodeId = 'fra1') => decideAutopeeringPolicy(fold(nodeDecider, history), nodeId, change);

describe('autopeering policy decider', () => {
  it('a node without a policy has the closed defaults', () => {
    expect(policyOf(fold(nodeDecider, [created]) as LiveNode)).to.deep.equal({ ...DEFAULT_AUTOPEERING_POLICY, enabled: false });
  });

  it('replace records the given fields over the defaults', () => {
    expect(decide([created, set(open)], { kind: 'replace', policy: { enabled: true, region: 'Europe' } })).to.deep.equal([
      set({ ...DEFAULT_AUTOPEERING_POLICY, enabled: true, region: 'Europe' }),
    ]);
  });

  it('patch records the given fields over the current policy', () => {
    expect(decide([created, set(open)], { kind: 'patch', policy: { max_sessions: null, country_code: 'DE' } })).to.deep.equal([
      set({ ...open, max_sessions: null, country_code: 'DE' }),
    ]);
  });

  it('records nothing when the policy would not change', () => {
    expect(decide([created, set(open)], { kind: 'replace', policy: open })).to.deep.equal([]);
    expect(decide([created, set(open)], { kind: 'patch', policy: { enabled: true } })).to.deep.equal([]);
    expect(decide([created], { kind: 'replace', policy: {} })).to.deep.equal([]);
  });

  it('folds the latest policy into the node state, and a re-created node starts from the defaults', () => {
    const state = fold(nodeDecider, [created, set(open)]) as LiveNode;
    expect(policyOf(state)).to.deep.equal(open);
    const again = fold(nodeDecider, [created, set(open), { type: 'NodeDeleted', data: { node_id: 'fra1' } }, created]) as LiveNode;
    expect(policyOf(again)).to.deep.equal(DEFAULT_AUTOPEERING_POLICY);
  });

  it('refuses an unknown or deleted node with unknown node <id>', () => {
    expect(() => decide([], { kind: 'patch', policy: { enabled: true } })).to.throw(NotFound, 'unknown node fra1');
    expect(() => decide([created, { type: 'NodeDeleted', data: { node_id: 'fra1' } }], { kind: 'replace', policy: {} })).to.throw(
      NotFound,
      'unknown node fra1',
    );
  });
});

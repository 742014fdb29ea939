import { expect } from 'chai';
import { RPKI_MIN_AGENT, takesBlockedPrefixes, takesRpki } from '../../../domain/fleet-ops/agent-gate.js';
import { materialise } from '../../../domain/desired-state/materialise.js';
import { liveNode } from '../desired-state/fixtures.js';

describe('fleet ops: blocked_prefixes agent gate (domain)', () => {
  it('withholds blocked prefixes only from an agent that reported a version below 1.0.187', () => {
    expect(takesBlockedPrefixes('1.0.186')).to.equal(false);
    expect(takesBlockedPrefixes('0.9.999')).to.equal(false);
    expect(takesBlockedPrefixes('1.0.187')).to.equal(true);
    expect(takesBlockedPrefixes('1.0.1000')).to.equal(true);
    expect(takesBlockedPrefixes('2.0.0')).to.equal(true);
    expect(takesBlockedPrefixes(null)).to.equal(true);
    expect(takesBlockedPrefixes(undefined)).to.equal(true);
    expect(takesBlockedPrefixes('dev')).to.equal(true);
    expect(takesBlockedPrefixes('0.0.0'), 'a source checkout').to.equal(true);
  });

  it('materialises the blocks for a current agent and an empty list for an older one', () => {
    const node = liveNode({ base_template: { bird: { blocked_prefixes: ['172.20.1.9/24', 'fd42::/48'] } } });
    const ctx = { nodes: new Map(), inbound: [], wireguard_public_key: null };
    expect(materialise(node, { ...ctx, agent_version: '1.0.187' }).bird.blocked_prefixes).to.deep.equal(['172.20.1.0/24', 'fd42::/48']);
    expect(materialise(node, ctx).bird.blocked_prefixes).to.deep.equal(['172.20.1.0/24', 'fd42::/48']);
    expect(materialise(node, { ...ctx, agent_version: '1.0.186' }).bird.blocked_prefixes).to.deep.equal([]);
  });

  it(`leaves bird.rpki out of the document of an agent below ${RPKI_MIN_AGENT}, and writes the template's mode (default reject_invalid) otherwise`, () => {
    const below = RPKI_MIN_AGENT.replace(/\d+$/, (n) => String(Number(n) - 1));
    expect(takesRpki(below)).to.equal(false);
    expect([RPKI_MIN_AGENT, null, '0.0.0', '2.0.0'].map(takesRpki)).to.deep.equal([true, true, true, true]);
    const ctx = { nodes: new Map(), inbound: [], wireguard_public_key: null };
    expect(materialise(liveNode({}), ctx).bird.rpki).to.deep.equal({ mode: 'reject_invalid' });
    expect(
      materialise(liveNode({ base_template: { bird: { rpki: { mode: 'observe' } } } }), { ...ctx, agent_version: RPKI_MIN_AGENT }).bird.rpki,
    ).to.deep.equal({ mode: 'observe' });
    expect(materialise(liveNode({ base_template: { bird: { rpki: { mode: 'off' } } } }), { ...ctx, agent_version: below }).bird).not.to.have.property('rpki');
  });
});

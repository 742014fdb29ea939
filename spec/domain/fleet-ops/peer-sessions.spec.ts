import { expect } from 'chai';
import { NotFound } from '../../../domain/errors.js';
import { evolveMitigations, foldMitigations } from '../../../domain/fleet-ops/mitigation-log.js';
import { isEbgp, planPeerDisable, planPeerEnable, sessionsOfAs } from '../../../domain/fleet-ops/peer-sessions.js';
import type { LiveNode } from '../../../domain/node/state.js';
import { applied, nodeNamed, peering, session } from './support.js';

describe('fleet ops: peer disable and enable (domain)', () => {
  const fleet = (): LiveNode[] => [
    nodeNamed(
      'fra1',
      {},
      {
        peerings: [peering(1, { remote_asn: 7 }), peering(2, { is_internal: true, remote_node_id: 'ams1', remote_asn: 7 })],
        sessions: [
          session(10, { remote_asn: 7 }, { peering_id: 1 }),
          session(11, { remote_asn: 7, enabled: true }, { peering_id: 1 }),
          session(12, { remote_asn: 7, enabled: false }, { peering_id: 1 }),
          session(13, { remote_asn: 7 }, { peering_id: 2 }),
        ],
      },
    ),
    nodeNamed('ams1', { asn: 7 }, { sessions: [session(20, { remote_asn: 7 })] }),
    nodeNamed('ber1', {}, { lifecycle: 'decommissioned', sessions: [session(30, { remote_asn: 7 })] }),
  ];

  it('counts as eBGP neither sessions of internal peerings nor sessions towards the node’s own AS', () => {
    const [fra1, ams1] = fleet();
    expect(fra1.sessions.map((s) => isEbgp(fra1, s))).to.deep.equal([true, true, true, false]);
    expect(isEbgp(ams1, ams1.sessions[0])).to.equal(false);
    expect(sessionsOfAs(fleet(), 7).map((s) => `${s.node_id}/${s.session.id}`)).to.deep.equal(['ber1/30', 'fra1/10', 'fra1/11', 'fra1/12']);
  });

  it('answers 404 for an AS without eBGP sessions', () => {
    expect(() => planPeerDisable(fleet(), 8)).to.throw(NotFound, 'no bgp sessions with remote_asn 8');
    expect(() => planPeerEnable(fleet(), 8, [])).to.throw(NotFound, 'no bgp sessions with remote_asn 8');
  });

  it('disables the enabled sessions, remembers what enabled was, and enable restores exactly those specs', () => {
    const nodes = fleet();
    const disable = planPeerDisable(nodes, 7);
    expect(disable.log).to.deep.equal([
      { node_id: 'ber1', session_id: 30, enabled_before: null },
      { node_id: 'fra1', session_id: 10, enabled_before: null },
      { node_id: 'fra1', session_id: 11, enabled_before: true },
    ]);
    const off = nodes.map((n) => applied(n, disable.events.get(n.node_id) ?? []));
    expect(sessionsOfAs(off, 7).every((s) => s.session.spec.enabled === false)).to.equal(true);
    expect(planPeerDisable(off, 7).events.size, 'a second disable changes nothing').to.equal(0);

    const enable = planPeerEnable(off, 7, disable.log);
    const on = off.map((n) => applied(n, enable.events.get(n.node_id) ?? []));
    expect(on.map((n) => n.sessions)).to.deep.equal(nodes.map((n) => n.sessions));
  });

  it('leaves a session disabled by hand as it is', () => {
    const nodes = fleet();
    const disable = planPeerDisable(nodes, 7);
    const off = nodes.map((n) => applied(n, disable.events.get(n.node_id) ?? []));
    const enable = planPeerEnable(off, 7, disable.log);
    expect(enable.log.map((s) => s.session_id)).to.deep.equal([30, 10, 11]);
    expect(enable.events.get('fra1')!.some((e) => e.type === 'BgpSessionUpdated' && e.data.session_id === 12)).to.equal(false);
  });

  it('keeps the first memory of a session through a second disable, and forgets the AS on enable', () => {
    let state = foldMitigations([{ type: 'PeerSessionsDisabled', data: { asn: 7, sessions: [{ node_id: 'a', session_id: 1, enabled_before: true }] } }]);
    state = evolveMitigations(state, {
      type: 'PeerSessionsDisabled',
      data: {
        asn: 7,
        sessions: [
          { node_id: 'a', session_id: 1, enabled_before: null },
          { node_id: 'a', session_id: 2, enabled_before: null },
        ],
      },
    });
    expect(state.get(7)).to.deep.equal([
      { node_id: 'a', session_id: 1, enabled_before: true },
      { node_id: 'a', session_id: 2, enabled_before: null },
    ]);
    expect(evolveMitigations(state, { type: 'PeerSessionsEnabled', data: { asn: 7, restored: [] } }).has(7)).to.equal(false);
  });
});

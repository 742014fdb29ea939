import { expect } from 'chai';
import { FLAP_DATA_FLOOR, flapPeerRows, peerSeverity, type PeerSessionInput } from '../../../domain/flaps/peers.js';
import type { NodePrefixFlap } from '../../../domain/flaps/prefix-rows.js';

const T0 = Date.parse('2026-11-03T10:00:00Z');
const AT = new Date(T0).toISOString();

const row = (node_id: string, prefix: string, peer_asn: number | null, score: number, extra: Partial<NodePrefixFlap> = {}): NodePrefixFlap => ({
  node_id,
  prefix,
  peer_asn,
  origin_asn: 4242420077,
  score,
  flaps: null,
  last_flap_at: null,
  captured_at: AT,
  as_path: null,
  changes: null,
  interval_s: null,
  alert_since: null,
  ...extra,
});
const session = (
  node_id: string,
  name: string,
  remote_asn: number | null,
  flap_score: number | null,
  extra: Partial<PeerSessionInput> = {},
): PeerSessionInput => ({
  node_id,
  name,
  kind: name.startsWith('ibgp_') ? 'ibgp' : 'ebgp',
  remote_asn,
  state: 'established',
  flap_score,
  flapping: (flap_score ?? 0) >= 3,
  last_transition_at: null,
  ...extra,
});

describe('domain/flaps/peers', () => {
  it('normalises each level by its list line: 1 exactly at prefix 20 or session 3, the larger level wins, a missing level counts 0', () => {
    expect(peerSeverity(20, null)).to.equal(1);
    expect(peerSeverity(null, 3)).to.equal(1);
    expect(peerSeverity(19.99, 2.99)).to.be.below(1);
    expect(peerSeverity(10, 6)).to.equal(2);
    expect(peerSeverity(60, 1.5)).to.equal(3);
    expect(peerSeverity(null, 0)).to.equal(0);
  });

  it('takes a prefix at its strongest node and counts it once across nodes', () => {
    const [peer] = flapPeerRows([row('n1', '172.21.0.0/24', 2, 30), row('n2', '172.21.0.0/24', 2, 12), row('n2', '172.21.1.0/24', 2, 4)], [], T0);
    expect(peer).to.deep.include({ asn: 2, prefix_count: 2, prefixes_flapping: 1, prefix_score_max: 30, session_score_max: null, nodes: ['n1', 'n2'] });
    expect(peer.severity).to.equal(1.5);
  });

  it('leaves out rows without a peer, iBGP sessions and sessions without a remote AS', () => {
    const peers = flapPeerRows([row('n1', '172.20.0.0/24', null, 50)], [session('n1', 'ibgp_n2', 1, 9), session('n1', 'dn42_x', null, 9)], T0);
    expect(peers).to.deep.equal([]);
  });

  it('lists every eBGP session of a peer with flap data, quiet ones and unrecorded ones included, by node and name', () => {
    const [peer] = flapPeerRows(
      [],
      [session('n2', 'dn42_b', 3, 4), session('n1', 'dn42_b2', 3, null), session('n1', 'dn42_b', 3, 0, { state: 'idle', last_transition_at: AT })],
      T0,
    );
    expect(peer.sessions).to.deep.equal([
      { node_id: 'n1', session: 'dn42_b', state: 'idle', flap_score: 0, flapping: false },
      { node_id: 'n1', session: 'dn42_b2', state: 'established', flap_score: null, flapping: false },
      { node_id: 'n2', session: 'dn42_b', state: 'established', flap_score: 4, flapping: true },
    ]);
    expect(peer).to.deep.include({ session_score_max: 4, prefix_score_max: null, prefix_count: 0, last_change_at: AT, nodes: ['n1', 'n2'] });
  });

  it('has no flap data below the floor: a quiet peer is not a row', () => {
    expect(flapPeerRows([row('n1', '172.21.0.0/24', 2, FLAP_DATA_FLOOR / 2)], [session('n1', 'dn42_b', 3, FLAP_DATA_FLOOR / 2)], T0)).to.deep.equal([]);
    // A score reported at the floor decays below it ten minutes later (prefix half-life 10 min).
    expect(flapPeerRows([row('n1', '172.21.0.0/24', 2, FLAP_DATA_FLOOR)], [], T0)).to.have.length(1);
    expect(flapPeerRows([row('n1', '172.21.0.0/24', 2, FLAP_DATA_FLOOR)], [], T0 + 600_000)).to.deep.equal([]);
  });

  it('orders by severity descending, then ASN', () => {
    const peers = flapPeerRows([row('n1', 'a', 5, 20), row('n1', 'b', 4, 20), row('n1', 'c', 9, 40)], [session('n1', 'dn42_x', 7, 1.5)], T0);
    expect(peers.map((p) => [p.asn, p.severity])).to.deep.equal([
      [9, 2],
      [4, 1],
      [5, 1],
      [7, 0.5],
    ]);
  });

  it('keeps a peer the kept alerts name, with its sessions', () => {
    const peers = flapPeerRows([], [session('n1', 'dn42_b', 3, 0)], T0, [2, 3]);
    expect(peers.map((p) => [p.asn, p.severity, p.prefix_score_max, p.session_score_max, p.sessions.length])).to.deep.equal([
      [2, 0, null, null, 0],
      [3, 0, null, 0, 1],
    ]);
  });
});

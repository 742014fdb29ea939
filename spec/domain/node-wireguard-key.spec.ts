import { expect } from 'chai';
import { NotFound } from '../../domain/errors.js';
import { nodeDecider, WireguardKeyMismatch } from '../../domain/node/decide.js';
import type { NodeEvent } from '../../domain/node/events.js';
import { given } from '../support/given.js';

const created: NodeEvent = { type: 'NodeCreated', data: { node_id: 'fra1', fields: { asn: 4242420001, router_id: '172.20.0.1' } } };
const KEY = 'wQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=';
const OTHER = 'xQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=';
const registered: NodeEvent = { type: 'WireguardKeyRegistered', data: { node_id: 'fra1', public_key: KEY, private_key_escrow: 'escrow-1' } };
const report = (public_key: string, private_key_escrow: string | null = null) => ({
  type: 'RegisterWireguardKey' as const,
  node_id: 'fra1',
  public_key,
  private_key_escrow,
});

describe('node decider: WireGuard key', () => {
  it('stores the first key the agent reports, with its escrow', () => {
    given(nodeDecider, [created]).when(report(KEY, 'escrow-1')).then([registered]);
    given(nodeDecider, [created])
      .when(report(KEY))
      .thenState((state) => {
        expect(state.status === 'Live' && state.wireguard).to.deep.equal({ public_key: KEY, private_key_escrow: null });
      });
  });

  it('answers the same key with nothing, or with a refreshed escrow when it changed', () => {
    given(nodeDecider, [created, registered]).when(report(KEY)).then([]);
    given(nodeDecider, [created, registered]).when(report(KEY, 'escrow-1')).then([]);
    given(nodeDecider, [created, registered])
      .when(report(KEY, 'escrow-2'))
      .then([{ type: 'WireguardKeyEscrowRefreshed', data: { node_id: 'fra1', private_key_escrow: 'escrow-2' } }]);
  });

  it('refuses another key than the registered one', () => {
    given(nodeDecider, [created, registered])
      .when(report(OTHER, 'escrow-2'))
      .thenThrows(WireguardKeyMismatch, 'wireguard public key of node fra1 does not match the registered key');
  });

  it('refuses a key for a node that does not exist', () => {
    given(nodeDecider, []).when(report(KEY)).thenThrows(NotFound, 'unknown node fra1');
  });
});

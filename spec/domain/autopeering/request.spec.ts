import { expect } from 'chai';
import { Conflict, IllegalState, NotFound } from '../../../domain/errors.js';
import { requestDecider } from '../../../domain/autopeering/request-decide.js';
import type { RequestEvent, RequestRecord } from '../../../domain/autopeering/request.js';
import { given } from '../../support/given.js';

const record: RequestRecord = {
  request_id: 7,
  node_id: 'fra1',
  asn: 4242420002,
  mntner: 'EXAMPLE-MNT',
  peering_id: 40,
  form: 'dual-plain',
  requested: {
    public_key: 'wQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=',
    endpoint: null,
    link_local: 'fe80::2',
    mtu: 1420,
    mp_bgp: false,
    session_addressing: 'link-local',
    peer_ipv4: '172.20.1.1',
    peer_ipv6: 'fd42:1::1',
    extended_next_hop: false,
    notes: 'hello',
  },
  provision: {
    endpoint: null,
    listen_port: 51800,
    node_public_key: null,
    node_link_local: 'fe80::1',
    node_asn: 4242420001,
    mtu: 1420,
    interface_name: 'dn42_0002',
    session_names: ['autopeer_4242420002_v4', 'autopeer_4242420002_v6'],
  },
};
const provisioned: RequestEvent = { type: 'AutopeeringRequestProvisioned', data: record };
const cancelled = (by: 'requester' | 'operator'): RequestEvent => ({
  type: 'AutopeeringRequestCancelled',
  data: { request_id: 7, node_id: 'fra1', asn: 4242420002, peering_id: 40, by, reject_reason: by === 'operator' ? 'removed by operator' : null },
});

describe('autopeering request decider', () => {
  it('provisions a new request once', () => {
    given(requestDecider, []).when({ type: 'ProvisionRequest', record }).then([provisioned]);
    given(requestDecider, [provisioned]).when({ type: 'ProvisionRequest', record }).thenThrows(Conflict, 'autopeering request 7 already exists');
  });

  it('cancels a provisioned request; an operator removal carries the reject reason', () => {
    given(requestDecider, [provisioned])
      .when({ type: 'CancelRequest', request_id: 7, by: 'requester' })
      .then([cancelled('requester')]);
    given(requestDecider, [provisioned])
      .when({ type: 'CancelRequest', request_id: 7, by: 'operator' })
      .then([cancelled('operator')]);
  });

  it('refuses to cancel twice by the requester (409) but lets an operator removal pass as a no-op', () => {
    given(requestDecider, [provisioned, cancelled('requester')])
      .when({ type: 'CancelRequest', request_id: 7, by: 'requester' })
      .thenThrows(IllegalState, 'autopeering request 7 is not provisioned');
    given(requestDecider, [provisioned, cancelled('requester')])
      .when({ type: 'CancelRequest', request_id: 7, by: 'operator' })
      .then([]);
  });

  it('does not know a request that was never provisioned', () => {
    given(requestDecider, []).when({ type: 'CancelRequest', request_id: 7, by: 'operator' }).thenThrows(NotFound, 'unknown autopeering request 7');
  });

  it('keeps the record through cancellation', () => {
    given(requestDecider, [provisioned])
      .when({ type: 'CancelRequest', request_id: 7, by: 'operator' })
      .thenState((state) => {
        expect(state).to.deep.equal({ status: 'cancelled', record, by: 'operator', reject_reason: 'removed by operator' });
      });
  });
});

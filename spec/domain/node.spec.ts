import { expect } from 'chai';
import { BadReference, Conflict, IllegalState, NotFound, Validation } from '../../domain/errors.js';
import { nodeDecider } from '../../domain/node/decide.js';
import type { NodeEvent, PeeringRecord } from '../../domain/node/events.js';
import type { NodeFields } from '../../domain/node/specs.js';
import { given } from '../support/given.js';

const fields: NodeFields = { asn: 4242420001, router_id: '172.20.0.1', link_local: 'fe80::1' };
const created: NodeEvent = { type: 'NodeCreated', data: { node_id: 'fra1', fields } };
const peering = (id: number, name: string, extra: Partial<PeeringRecord> = {}): PeeringRecord => ({
  id,
  name,
  remote_asn: 4242420002,
  remote_node_id: null,
  remote_label: null,
  is_internal: false,
  enabled: true,
  notes: null,
  ...extra,
});
const iface = (id: number, name: string, listen_port: number, peering_id: number | null = null) => ({
  id,
  peering_id,
  enabled: true,
  sort_order: 0,
  spec: { name, listen_port },
});

describe('node decider', () => {
  it('creates a node once; a second create is a conflict', () => {
    given(nodeDecider, []).when({ type: 'CreateNode', node_id: 'fra1', fields }).then([created]);
    given(nodeDecider, [created]).when({ type: 'CreateNode', node_id: 'fra1', fields }).thenThrows(Conflict, 'node fra1 already exists');
  });

  it('may create a node again after it was deleted', () => {
    given(nodeDecider, [created, { type: 'NodeDeleted', data: { node_id: 'fra1' } }])
      .when({ type: 'CreateNode', node_id: 'fra1', fields })
      .then([created]);
  });

  it('refuses commands on a node that does not exist', () => {
    given(nodeDecider, [])
      .when({ type: 'UpdateNode', node_id: 'fra1', changes: { site: 'x' } })
      .thenThrows(NotFound, 'unknown node fra1');
    given(nodeDecider, [created, { type: 'NodeDeleted', data: { node_id: 'fra1' } }])
      .when({ type: 'DecommissionNode', node_id: 'fra1' })
      .thenThrows(NotFound);
  });

  it('refuses a link_local outside fe80::/10 or with a zone', () => {
    given(nodeDecider, [created])
      .when({ type: 'UpdateNode', node_id: 'fra1', changes: { link_local: 'fe80::1%eth0' } })
      .thenThrows(Validation, 'invalid link_local');
    given(nodeDecider, [])
      .when({ type: 'CreateNode', node_id: 'x', fields: { ...fields, link_local: 'fd00::1' } })
      .thenThrows(Validation, 'invalid link_local');
  });

  it('deletes a published node only once decommissioned', () => {
    given(nodeDecider, [created])
      .when({ type: 'DeleteNode', node_id: 'fra1', published: true })
      .thenThrows(IllegalState, /^node fra1 is live; /);
    given(nodeDecider, [created])
      .when({ type: 'DeleteNode', node_id: 'fra1', published: false })
      .then([{ type: 'NodeDeleted', data: { node_id: 'fra1' } }]);
    given(nodeDecider, [created, { type: 'NodeDecommissioned', data: { node_id: 'fra1' } }])
      .when({ type: 'DeleteNode', node_id: 'fra1', published: true })
      .then([{ type: 'NodeDeleted', data: { node_id: 'fra1' } }]);
  });

  it('refuses a duplicate peering name and an unknown remote node', () => {
    const history: NodeEvent[] = [created, { type: 'PeeringCreated', data: { node_id: 'fra1', peering: peering(1, 'p') } }];
    given(nodeDecider, history)
      .when({ type: 'CreatePeering', node_id: 'fra1', peering: peering(2, 'p'), remoteExists: true })
      .thenThrows(Conflict, 'peering p already exists on node fra1');
    given(nodeDecider, history)
      .when({ type: 'CreatePeering', node_id: 'fra1', peering: peering(2, 'q', { remote_node_id: 'ghost', is_internal: true }), remoteExists: false })
      .thenThrows(BadReference, 'unknown node ghost');
  });

  it('deletes a peering together with its interfaces and sessions, and leaves other children alone', () => {
    const history: NodeEvent[] = [
      created,
      { type: 'PeeringCreated', data: { node_id: 'fra1', peering: peering(1, 'p') } },
      { type: 'InterfaceCreated', data: { node_id: 'fra1', interface: iface(10, 'dn42_p', 51801, 1) } },
      { type: 'InterfaceCreated', data: { node_id: 'fra1', interface: iface(11, 'dn42_other', 51802) } },
      {
        type: 'BgpSessionCreated',
        data: {
          node_id: 'fra1',
          session: { id: 20, peering_id: 1, sort_order: 0, spec: { name: 's', remote_asn: 1, neighbor_address: 'fe80::2', interface: 'dn42_p' } },
        },
      },
    ];
    given(nodeDecider, history)
      .when({ type: 'DeletePeering', node_id: 'fra1', peering_id: 1 })
      .then([
        { type: 'InterfaceDeleted', data: { node_id: 'fra1', interface_id: 10 } },
        { type: 'BgpSessionDeleted', data: { node_id: 'fra1', session_id: 20 } },
        { type: 'PeeringDeleted', data: { node_id: 'fra1', peering_id: 1 } },
      ]);
  });

  it('keeps one enabled WireGuard interface per listen port, and ports inside the pool', () => {
    const history: NodeEvent[] = [created, { type: 'InterfaceCreated', data: { node_id: 'fra1', interface: iface(10, 'dn42_a', 51801) } }];
    given(nodeDecider, history)
      .when({ type: 'CreateInterface', node_id: 'fra1', interface: iface(11, 'dn42_b', 51801) })
      .thenThrows(Conflict, "wireguard listen_port 51801 is already used by interface 'dn42_a'");
    given(nodeDecider, history)
      .when({ type: 'CreateInterface', node_id: 'fra1', interface: iface(11, 'dn42_b', 51700) })
      .thenThrows(Validation, 'wireguard listen_port must be inside node runtime.wireguard_port_range 51800-51830');
    // Moving the holder away frees the port for another interface in the same decision stream.
    given(nodeDecider, history)
      .when({ type: 'UpdateInterface', node_id: 'fra1', interface_id: 10, changes: { enabled: false } })
      .thenState((state) => {
        expect(state.status === 'Live' && state.interfaces[0].enabled).to.equal(false);
      });
  });

  it('links a child only to a peering of its own node; clear_peering unlinks', () => {
    const history: NodeEvent[] = [
      created,
      { type: 'PeeringCreated', data: { node_id: 'fra1', peering: peering(1, 'p') } },
      { type: 'InterfaceCreated', data: { node_id: 'fra1', interface: iface(10, 'dn42_a', 51801, 1) } },
    ];
    given(nodeDecider, history)
      .when({ type: 'UpdateInterface', node_id: 'fra1', interface_id: 10, changes: { peering_id: 99 } })
      .thenThrows(BadReference, 'peering 99 not on node fra1');
    given(nodeDecider, history)
      .when({ type: 'UpdateInterface', node_id: 'fra1', interface_id: 10, changes: { clear_peering: true } })
      .thenState((state) => {
        expect(state.status === 'Live' && state.interfaces[0].peering_id).to.equal(null);
      });
  });
});

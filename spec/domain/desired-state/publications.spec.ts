import { expect } from 'chai';
import { fold } from '../../../domain/decider.js';
import { publicationsFor, type NodePublications } from '../../../domain/desired-state/publications.js';
import { decideAll, nodeDecider, type NodeCommand } from '../../../domain/node/decide.js';
import type { NodeEvent, PeeringRecord } from '../../../domain/node/events.js';
import type { NodeFields } from '../../../domain/node/specs.js';

const fields: NodeFields = { asn: 4242420001, router_id: '172.20.0.1', link_local: 'fe80::1', base_template: { bird: { scan_time: 5 } } };
const created: NodeEvent = { type: 'NodeCreated', data: { node_id: 'fra1', fields } };
const peering = (id: number, extra: Partial<PeeringRecord> = {}): PeeringRecord => ({
  id,
  name: `p${id}`,
  remote_asn: 4242420002,
  remote_node_id: null,
  remote_label: null,
  is_internal: false,
  enabled: true,
  notes: null,
  ...extra,
});
const internal = (id: number) => peering(id, { is_internal: true, remote_node_id: 'ams1' });
const remoteNode: NodeEvent = { type: 'NodeCreated', data: { node_id: 'ams1', fields } };

/** given the node's history, when these commands are decided, then the write publishes this. */
function given(history: readonly NodeEvent[]) {
  return {
    when(...commands: NodeCommand[]) {
      return {
        then(expected: Partial<NodePublications>): void {
          const before = fold(nodeDecider, history);
          const { events, state: after } = decideAll(commands, before);
          expect(publicationsFor({ events, before, after })).to.deep.equal({ publish: 'none', topology: false, inboundPeers: false, ...expected });
        },
      };
    },
  };
}

describe('publicationsFor', () => {
  it('publishes nothing for a new node, but changes the topology others read', () => {
    given([]).when({ type: 'CreateNode', node_id: 'fra1', fields }).then({ topology: true });
  });

  it('publishes the empty state on decommission, the node again on recommission, nothing on delete; each a topology change', () => {
    given([created]).when({ type: 'DecommissionNode', node_id: 'fra1' }).then({ publish: 'empty', topology: true });
    given([created, { type: 'NodeDecommissioned', data: { node_id: 'fra1' } }])
      .when({ type: 'RecommissionNode', node_id: 'fra1' })
      .then({ publish: 'always', topology: true });
    given([created]).when({ type: 'DeleteNode', node_id: 'fra1', published: false }).then({ topology: true });
  });

  it('publishes a node PATCH only once the node is published, a topology change only when a fact others read changed', () => {
    given([created])
      .when({ type: 'UpdateNode', node_id: 'fra1', changes: { labels: { a: 'b' } } })
      .then({ publish: 'if-published' });
    given([created])
      .when({ type: 'UpdateNode', node_id: 'fra1', changes: { router_id: '172.20.0.2' } })
      .then({ publish: 'if-published', topology: true });
    given([created])
      .when({ type: 'UpdateNode', node_id: 'fra1', changes: { base_template: { bird: { scan_time: 10 } } } })
      .then({ publish: 'if-published', topology: true });
  });

  it('treats a change of only the route-tuning keys of base_template as no topology change (the console route tuning)', () => {
    given([created])
      .when({ type: 'UpdateNode', node_id: 'fra1', changes: { base_template: { bird: { scan_time: 5, cold_potato_med: 100 } } } })
      .then({ publish: 'if-published' });
  });

  it('publishes nothing for a PATCH that changes nothing', () => {
    given([created])
      .when({ type: 'UpdateNode', node_id: 'fra1', changes: { asn: 4242420001 } })
      .then({});
  });

  it('publishes every peering write; an internal link, before or after, changes the topology', () => {
    given([created])
      .when({ type: 'CreatePeering', node_id: 'fra1', peering: peering(1), remoteExists: true })
      .then({ publish: 'always' });
    given([created, remoteNode])
      .when({ type: 'CreatePeering', node_id: 'fra1', peering: internal(1), remoteExists: true })
      .then({ publish: 'always', topology: true });
    const withInternal: NodeEvent = { type: 'PeeringCreated', data: { node_id: 'fra1', peering: internal(1) } };
    given([created, withInternal])
      .when({ type: 'UpdatePeering', node_id: 'fra1', peering_id: 1, changes: { is_internal: false }, remoteExists: true })
      .then({ publish: 'always', topology: true });
    given([created, withInternal]).when({ type: 'DeletePeering', node_id: 'fra1', peering_id: 1 }).then({ publish: 'always', topology: true });
    given([created, { type: 'PeeringCreated', data: { node_id: 'fra1', peering: peering(1) } }])
      .when({ type: 'DeletePeering', node_id: 'fra1', peering_id: 1 })
      .then({ publish: 'always' });
  });

  it('publishes interface and session writes without a topology change', () => {
    given([created])
      .when({
        type: 'CreateInterface',
        node_id: 'fra1',
        interface: { id: 1, peering_id: null, enabled: true, sort_order: 0, spec: { name: 'wg0', listen_port: 51820 } },
      })
      .then({ publish: 'always' });
  });

  it('re-materialises the inbound internal peers on a first WireGuard key, nothing on an escrow refresh', () => {
    given([created]).when({ type: 'RegisterWireguardKey', node_id: 'fra1', public_key: 'k', private_key_escrow: null }).then({ inboundPeers: true });
    given([created, { type: 'WireguardKeyRegistered', data: { node_id: 'fra1', public_key: 'k', private_key_escrow: null } }])
      .when({ type: 'RegisterWireguardKey', node_id: 'fra1', public_key: 'k', private_key_escrow: 'e' })
      .then({});
  });

  it('takes the strongest publication of a write with several events', () => {
    const before = fold(nodeDecider, [created]);
    const events: NodeEvent[] = [
      { type: 'NodeUpdated', data: { node_id: 'fra1', changes: { labels: { a: 'b' } } } },
      { type: 'PeeringCreated', data: { node_id: 'fra1', peering: peering(1) } },
    ];
    const after = events.reduce(nodeDecider.evolve, before);
    expect(publicationsFor({ events, before, after }).publish).to.equal('always');
  });

  it('publishes a node joining a DNS group', () => {
    const before = fold(nodeDecider, [created]);
    const assigned: NodeEvent[] = [{ type: 'NodeDnsGroupAssigned', data: { node_id: 'fra1', dns_group_id: 7 } }];
    expect(publicationsFor({ events: assigned, before, after: assigned.reduce(nodeDecider.evolve, before) }).publish).to.equal('always');
  });
});

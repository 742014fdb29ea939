import { expect } from 'chai';
import { bgp, node, startFleet, wg, type FleetHarness } from './support.js';

describe('control: a projection rebuild reproduces every fleet response', () => {
  let h: FleetHarness;
  before(async () => {
    h = await startFleet();
  });
  after(async () => {
    await h.close();
  });

  /** Every list and detail the fleet endpoints serve, as the exact response text. */
  async function snapshot(): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    const get = async (path: string) => {
      const res = await h.client.get(path);
      out[path] = `${res.status} ${res.text}`;
      return res.body;
    };
    const nodes = await get('/admin/nodes');
    for (const n of nodes as { node_id: string; current_generation: number }[]) {
      const id = n.node_id;
      await get(`/admin/nodes/${id}`);
      const peerings = await get(`/admin/nodes/${id}/peerings`);
      await get(`/admin/nodes/${id}/peerings/full`);
      const ifaces = await get(`/admin/nodes/${id}/interfaces`);
      const sessions = await get(`/admin/nodes/${id}/bgp-sessions`);
      await get(`/admin/nodes/${id}/desired-state`);
      await get(`/admin/nodes/${id}/generations?limit=500`);
      await get(`/admin/nodes/${id}/history?limit=500`);
      for (let g = 1; g <= n.current_generation; g++) {
        await get(`/admin/nodes/${id}/generations/${g}`);
        if (g > 1) await get(`/admin/nodes/${id}/generations/${g}/diff`);
      }
      for (const p of peerings as { id: number }[]) {
        await get(`/admin/peerings/${p.id}`);
        await get(`/admin/peerings/${p.id}/full`);
      }
      for (const i of ifaces as { id: number }[]) await get(`/admin/interfaces/${i.id}`);
      for (const s of sessions as { id: number }[]) await get(`/admin/bgp-sessions/${s.id}`);
    }
    await get('/admin/nodes/gone/history?limit=500');
    await get('/admin/audit-log?limit=1000');
    return out;
  }

  it('after a scripted scenario, byte for byte', async () => {
    // Every step must succeed (but the last, refused one), or the scenario proves little.
    const ok = async <T>(res: Promise<{ status: number; text: string; body: T }>) => {
      const r = await res;
      expect(r.status, r.text).to.be.within(200, 299);
      return r;
    };
    const c = {
      post: (path: string, body?: unknown) => ok(h.client.post(path, body)),
      put: (path: string, body?: unknown) => ok(h.client.put(path, body)),
      patch: (path: string, body?: unknown) => ok(h.client.patch(path, body)),
      delete: (path: string) => ok(h.client.delete(path)),
    };
    const tick = () => h.sys.clock.advance(1500);
    await c.post('/admin/nodes', node('fra1', { base_template: { bird: { internal_topology: { routers: ['ams1'] } } } }));
    tick();
    await c.post('/admin/nodes', node('ams1', { router_id: '172.20.0.2', loopback_ipv4: '172.20.0.2', link_local: 'fe80::3', site: 'ams' }));
    tick();
    await c.post('/admin/nodes', node('gone'));
    const p = (
      await c.post('/admin/nodes/fra1/peerings/provision', {
        peering: { name: 'p1', remote_asn: 4242420002, notes: 'n' },
        interface_spec: wg('dn42_p1', 51801),
        bgp_spec: bgp('p1', 4242420002, { interface: 'dn42_p1' }),
      })
    ).body;
    tick();
    await c.post('/admin/nodes/fra1/peerings', { name: 'to-ams', remote_asn: 4242420001, remote_node_id: 'ams1', is_internal: true });
    await c.post('/admin/nodes/ams1/interfaces', { spec: wg('dn42_fra', 51801) });
    tick();
    await c.patch(`/admin/peerings/${p.peering.id}`, { remote_label: 'Peer One' });
    await c.patch(`/admin/interfaces/${p.interface.id}`, { sort_order: 4, spec: wg('dn42_p1', 51805, { mtu: 1380 }) });
    await c.patch(`/admin/bgp-sessions/${p.bgp_session.id}`, { spec: bgp('p1', 4242420002, { interface: 'dn42_p1', link_latency: 2 }) });
    tick();
    await c.put('/admin/nodes/fra1/peerings/full', {
      peering: { name: 'p2', remote_asn: 4242420005 },
      interfaces: [{ spec: wg('dn42_p2', 51802) }],
      bgp_sessions: [{ spec: bgp('p2', 4242420005, { interface: 'dn42_p2' }) }],
    });
    await c.put('/admin/nodes/fra1/peerings/full', {
      peering: { name: 'p2', remote_asn: 4242420005, enabled: false },
      interfaces: [{ spec: wg('dn42_p2', 51803) }],
      bgp_sessions: [],
    });
    await c.post('/admin/nodes/ams1/bgp-sessions', { spec: bgp('orphan', 4242420007, { interface: 'dn42_fra' }) });
    await c.post('/admin/nodes/ams1/peerings/backfill', {});
    tick();
    await c.patch('/admin/nodes/ams1', { loopback_ipv6: 'fd42:4242:2::1', labels: { region: 41 } });
    await c.post('/admin/nodes/fra1/generations/2/rollback');
    await c.post('/admin/nodes/ams1/decommission');
    await c.post('/admin/nodes/ams1/recommission');
    await c.post('/admin/provision', {
      state: {
        node: { node_id: 'edge9', asn: 4242420009, router_id: '172.20.9.1' },
        interfaces: [],
        bgp_sessions: [],
        bird: { internal_topology: { routers: [], hosts: [] } },
      },
    });
    await c.delete('/admin/nodes/gone');
    expect((await h.client.post('/admin/nodes', node('fra1'))).status).to.equal(409); // refused, and audited
    await h.sys.context.background.drain();

    const before = await snapshot();
    expect(Object.keys(before).length).to.be.greaterThan(40);
    const progress = await h.sys.projections.rebuild();
    expect(progress.map((p) => p.projection)).to.include('fleet');
    const after = await snapshot();
    expect(after).to.deep.equal(before);
  });
});

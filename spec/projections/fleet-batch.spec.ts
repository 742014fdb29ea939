import { expect } from 'chai';
import { withTransaction } from '../../infra/db/pool.js';
import { START, type RecordedEvent } from '../../infra/eventstore/types.js';
import { fleetProjection } from '../../projections/fleet/projection.js';
import { handles } from '../../projections/runtime/projection.js';
import { bgp, node, startFleet, wg, type FleetHarness } from '../http/control/fleet/support.js';
import { tableRows } from '../support/tables.js';

/** The fleet tables after applying `events` to empty ones, in a transaction rolled back afterwards. */
async function replayed(h: FleetHarness, events: readonly RecordedEvent[], how: 'apply' | 'applyBatch'): Promise<Record<string, unknown[]>> {
  const rolledBack = new Error('rolled back');
  let tables: Record<string, unknown[]> = {};
  await withTransaction(h.sys.pool, async (tx) => {
    for (const table of fleetProjection.tables) await tx.query(`DELETE FROM ${table}`);
    if (how === 'applyBatch') await fleetProjection.applyBatch!(tx, events);
    else for (const e of events) await fleetProjection.apply(tx, e);
    tables = {
      nodes: await tableRows(tx, 'nodes', 'node_id'),
      peerings: await tableRows(tx, 'peerings', 'id'),
      interfaces: await tableRows(tx, 'interfaces', 'id'),
      bgp_sessions: await tableRows(tx, 'bgp_sessions', 'id'),
      generations: await tableRows(tx, 'generations', 'node_id, generation'),
      node_history: await tableRows(tx, 'node_history', 'tx, pos'),
    };
    throw rolledBack;
  }).catch((err) => {
    if (err !== rolledBack) throw err;
  });
  return tables;
}

describe('fleet projection: applyBatch leaves the rows apply leaves one event at a time', function () {
  this.timeout(120_000);
  let h: FleetHarness;
  before(async () => {
    h = await startFleet();
  });
  after(async () => h?.close());

  it('with runs of creates (nodes with full peerings, an internal one, a node deleted and created again)', async () => {
    const ok = async (res: Promise<{ status: number; text: string; body: any }>) => {
      const r = await res;
      expect(r.status, r.text).to.be.within(200, 299);
      return r.body;
    };
    const full = (name: string, remote: Record<string, unknown>, port: number) => ({
      peering: { name, ...remote },
      interfaces: [{ spec: wg(`wg_${name}`, port, remote.is_internal ? { addresses: ['fe80::1/64'] } : {}) }],
      bgp_sessions: [{ spec: bgp(`s_${name}`, remote.remote_asn as number) }, { spec: bgp(`s2_${name}`, remote.remote_asn as number), sort_order: 1 }],
    });
    for (const [i, id] of ['c1', 'c2'].entries()) {
      await ok(h.client.post('/admin/nodes', node(id, { router_id: `172.20.1.${i + 1}` })));
      await ok(h.client.put(`/admin/nodes/${id}/peerings/full`, full('ext', { remote_asn: 4242420011 }, 51811)));
      h.sys.clock.advance(1000);
    }
    await ok(h.client.put('/admin/nodes/c2/peerings/full', full('int', { remote_asn: 4242420001, remote_node_id: 'c1', is_internal: true }, 52812)));
    await ok(h.client.post('/admin/nodes/c2/decommission', {}));
    await ok(h.client.delete('/admin/nodes/c2'));
    h.sys.clock.advance(1000);
    await ok(h.client.post('/admin/nodes', node('c2', { router_id: '172.20.1.2' })));
    await ok(h.client.put('/admin/nodes/c2/peerings/full', full('again', { remote_asn: 4242420012 }, 51813)));
    const events = (await h.sys.store.readAll(START, 10_000)).filter((e) => handles(fleetProjection, e));
    for (const type of ['NodeCreated', 'PeeringCreated', 'InterfaceCreated', 'BgpSessionCreated', 'NodeDeleted'])
      expect(
        events.some((e) => e.type === type),
        type,
      ).to.equal(true);

    const batched = await replayed(h, events, 'applyBatch');
    expect(await replayed(h, events, 'apply')).to.deep.equal(batched);
    expect((batched.nodes as { node_id: string }[]).map((n) => n.node_id)).to.include.members(['c1', 'c2']);
    expect((batched.peerings as { name: string }[]).map((p) => p.name)).to.include.members(['ext', 'again']);
    // And the live tables are what the batches of the real appends left.
    for (const table of ['peerings', 'interfaces', 'bgp_sessions'] as const)
      expect(await tableRows(h.sys.pool, table, 'id'), table).to.deep.equal((await replayed(h, events, 'apply'))[table]);
  });

  it('with runs of session updates (peer AS disable and enable over several nodes, a session updated twice in one run)', async () => {
    const ok = async (res: Promise<{ status: number; text: string; body: any }>) => {
      const r = await res;
      expect(r.status, r.text).to.be.within(200, 299);
      return r.body;
    };
    const sessions: number[] = [];
    for (const [i, id] of ['a1', 'b1'].entries()) {
      await ok(h.client.post('/admin/nodes', node(id, { router_id: `172.20.0.${i + 1}` })));
      await ok(h.client.post(`/admin/nodes/${id}/interfaces`, { spec: wg('dn42_peer', 51801) }));
      for (const name of ['x1', 'x2']) sessions.push((await ok(h.client.post(`/admin/nodes/${id}/bgp-sessions`, { spec: bgp(name, 4242420009) }))).id);
      h.sys.clock.advance(1000);
    }
    await ok(h.client.post('/admin/fleet/mitigations/peer-disable', { asn: 4242420009 }));
    h.sys.clock.advance(1000);
    await ok(h.client.post('/admin/fleet/mitigations/peer-enable', { asn: 4242420009 }));
    const events = (await h.sys.store.readAll(START, 10_000)).filter((e) => handles(fleetProjection, e));
    const disabled = events.filter((e) => e.type === 'BgpSessionUpdated');
    expect(disabled, 'peer disable and enable update each session').to.have.length(2 * sessions.length);

    // One more run, made up: a session twice (its second update must win), a sort order, a detach from its peering.
    const last = events[events.length - 1];
    const [s1, s2, s3] = sessions;
    const extra = [
      { session_id: s1, node_id: 'a1', changes: { spec: bgp('x1', 4242420009, { enabled: false }) } },
      { session_id: s2, node_id: 'a1', changes: { sort_order: 7 } },
      { session_id: s1, node_id: 'a1', changes: { spec: bgp('renamed', 4242420010) } },
      { session_id: s3, node_id: 'b1', changes: { peering_id: null } },
    ].map((data, i): RecordedEvent => ({
      ...last,
      id: `00000000-0000-4000-8000-00000000000${i}`,
      streamId: `node-${data.node_id}`,
      type: 'BgpSessionUpdated',
      data,
      position: { tx: last.position.tx + 1n, pos: last.position.pos + 1n + BigInt(i) },
      metadata: { ...last.metadata, recordedAt: new Date(Date.parse(last.metadata.recordedAt!) + 1000 * (i + 1)).toISOString() },
    }));
    const all = [...events, ...extra];

    const batched = await replayed(h, all, 'applyBatch');
    expect(await replayed(h, all, 'apply')).to.deep.equal(batched);
    const byId = new Map((batched.bgp_sessions as { id: number; name: string; sort_order: number; enabled: boolean }[]).map((s) => [s.id, s]));
    expect(byId.get(s1)).to.include({ name: 'renamed', enabled: true });
    expect(byId.get(s2)).to.include({ sort_order: 7 });
    // And the live tables are what the batches of the real appends left.
    expect(await tableRows(h.sys.pool, 'bgp_sessions', 'id')).to.deep.equal((await replayed(h, events, 'apply')).bgp_sessions);
  });
});

import { expect } from 'chai';
import { expectResponse } from '../../../support/http.js';
import { node, startFleet, wg, type FleetHarness } from './support.js';

/** What a no-op write must leave alone: the event log and every stream's version. */
async function logHead(h: FleetHarness): Promise<{ events: number; streams: Record<string, number> }> {
  const events = Number((await h.sys.pool.query(`SELECT count(*) AS n FROM events`)).rows[0].n);
  const rows = (await h.sys.pool.query<{ stream_id: string; version: number }>(`SELECT stream_id, version FROM streams`)).rows;
  return { events, streams: Object.fromEntries(rows.map((r) => [r.stream_id, r.version])) };
}

/** Events of a type outside the audit trail (an admin write's audit entry is not the write). */
async function writeEvents(h: FleetHarness): Promise<number> {
  return Number((await h.sys.pool.query(`SELECT count(*) AS n FROM events WHERE type <> 'AuditRecorded'`)).rows[0].n);
}

describe('control: no-op node and peering writes', () => {
  let h: FleetHarness;
  beforeEach(async () => {
    h = await startFleet();
    await h.client.post('/admin/nodes', node('fra1', { labels: { role: 'edge' } }));
    // An interface publishes generation 1.
    expectResponse(await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_a', 51800) })).status(201);
  });
  afterEach(async () => {
    await h.close();
  });

  it('a PATCH {} on a published node answers 200 with the node, appends no event and publishes no generation', async () => {
    const before = await writeEvents(h);
    const node = (await h.client.get('/admin/nodes/fra1')).body;
    const res = await h.client.patch('/admin/nodes/fra1', {});
    expectResponse(res).status(200);
    expect(res.body).to.deep.equal(node);
    expect(res.body.current_generation).to.equal(1);
    expect(await writeEvents(h)).to.equal(before);
    expect((await h.client.get('/admin/nodes/fra1/desired-state')).body.generation).to.equal(1);
    expect(h.sys.broadcaster.published.map((c) => c.generation)).to.deep.equal([1]);
  });

  it('a node PATCH repeating the stored values (absent optional fields given as null, {} or []) changes nothing', async () => {
    const head = await logHead(h);
    const before = await writeEvents(h);
    const stored = (await h.client.get('/admin/nodes/fra1')).body;
    const res = await h.client.patch('/admin/nodes/fra1', {
      asn: stored.asn,
      router_id: stored.router_id,
      site: stored.site,
      labels: { role: 'edge' },
      inventory: {},
      base_template: {},
      ipv4_prefixes: stored.ipv4_prefixes,
    });
    expectResponse(res)
      .status(200)
      .body({ current_generation: 1, labels: { role: 'edge' }, updated_at: stored.updated_at });
    expect(await writeEvents(h)).to.equal(before);
    const after = await logHead(h);
    // Only audit streams may have moved.
    for (const [stream, version] of Object.entries(head.streams)) if (!stream.startsWith('audit')) expect(after.streams[stream], stream).to.equal(version);
  });

  it('a node PATCH that changes one field among repeated ones records only that field', async () => {
    const res = await h.client.patch('/admin/nodes/fra1', { site: 'fra', labels: { role: 'core' } });
    expectResponse(res)
      .status(200)
      .body({ current_generation: 2, labels: { role: 'core' } });
    const last = (await h.sys.pool.query(`SELECT data FROM events WHERE type = 'NodeUpdated' ORDER BY position DESC LIMIT 1`)).rows[0].data;
    expect(last.changes).to.deep.equal({ labels: { role: 'core' } });
    const gen = await h.client.get('/admin/nodes/fra1/generations/2');
    expect(gen.body.reason).to.equal('node updated (labels)');
  });

  it('a peering PATCH that changes nothing (empty, or every field as stored) appends nothing and publishes nothing', async () => {
    const created = await h.client.post('/admin/nodes/fra1/peerings', { name: 'peer1', remote_asn: 4242420002, enabled: false, notes: 'n' });
    expectResponse(created).status(201);
    const generation = (await h.client.get('/admin/nodes/fra1')).body.current_generation;
    const before = await writeEvents(h);
    for (const body of [
      {},
      { name: 'peer1', remote_asn: 4242420002, enabled: false, notes: 'n', remote_node_id: null, remote_label: null, is_internal: false },
    ]) {
      const res = await h.client.patch(`/admin/peerings/${created.body.id}`, body);
      expectResponse(res).status(200);
      expect(res.body).to.deep.equal(created.body);
    }
    expect(await writeEvents(h)).to.equal(before);
    expect((await h.client.get('/admin/nodes/fra1')).body.current_generation).to.equal(generation);
    // A real change still writes and publishes.
    expectResponse(await h.client.patch(`/admin/peerings/${created.body.id}`, { enabled: true }))
      .status(200)
      .body({ enabled: true });
    expect((await h.client.get('/admin/nodes/fra1')).body.current_generation).to.equal(generation + 1);
  });

  it('a no-op PATCH still answers 404 for an unknown node or peering and 422 for an invalid field', async () => {
    expectResponse(await h.client.patch('/admin/nodes/nope', {}))
      .status(404)
      .detail('unknown node nope');
    expectResponse(await h.client.patch('/admin/peerings/999999', {}))
      .status(404)
      .detail('unknown peering 999999');
    expectResponse(await h.client.patch('/admin/nodes/fra1', { asn: 0 })).status(422);
  });
});

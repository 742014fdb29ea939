import { expect } from 'chai';
import { handleCommand } from '../../../../commands/handle.js';
import { nextIds } from '../../../../commands/ids.js';
import { requestDecider, type RequestCommand } from '../../../../domain/autopeering/request-decide.js';
import { requestStream, type RequestRecord } from '../../../../domain/autopeering/request.js';
import { activeRequestOfPeering, getRequest, listRequests } from '../../../../projections/autopeering/queries.js';
import { expectResponse } from '../../../support/http.js';
import { node, startFleet, type FleetHarness } from '../fleet/support.js';

/** A request as the portal will record it (the portal issue adds the command that builds it). */
const record = (request_id: number, asn: number, peering_id: number): RequestRecord => ({
  request_id,
  node_id: 'fra1',
  asn,
  mntner: `MNT-${asn}`,
  peering_id,
  form: 'link-local-mp',
  requested: {
    public_key: 'wQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=',
    endpoint: 'peer.example.net:51820',
    link_local: 'fe80::1234',
    mtu: 1420,
    mp_bgp: true,
    session_addressing: 'link-local',
    peer_ipv4: null,
    peer_ipv6: null,
    extended_next_hop: true,
    notes: null,
  },
  provision: {
    endpoint: 'fra1.example.net:51801',
    listen_port: 51801,
    node_public_key: null,
    node_link_local: 'fe80::1',
    node_asn: 4242420001,
    mtu: 1420,
    interface_name: `dn42_${asn % 10000}`,
    session_names: [`dn42_${asn % 10000}`],
  },
});

describe('control: autopeering request list', function () {
  this.timeout(30_000);
  let h: FleetHarness;
  let ids: number[];
  const run = (id: number, command: RequestCommand) =>
    handleCommand(h.sys.store, requestStream(id), requestDecider, command, { actor: 'spec', recordedAt: h.sys.clock.now().toISOString() });
  const list = async (query = '') =>
    (await h.client.get(`/admin/autopeering/requests${query}`)).body.requests as { id: number; status: string; created_at: string; updated_at: string }[];

  before(async () => {
    h = await startFleet();
    expectResponse(await h.client.post('/admin/nodes', node('fra1'))).status(201);
  });
  after(async () => h?.close());

  it('is empty before any request exists', async () => {
    expectResponse(await h.client.get('/admin/autopeering/requests'))
      .status(200)
      .body({ requests: [] });
  });

  it('lists recorded requests newest first, filters by status, and counts provisioned ones per node', async () => {
    ids = await nextIds(h.sys.pool, 'autopeering_request', 3);
    for (const [i, id] of ids.entries()) await run(id, { type: 'ProvisionRequest', record: record(id, 4242420002 + i, 100 + i) });
    h.sys.clock.advance(60_000);
    await run(ids[0], { type: 'CancelRequest', request_id: ids[0], by: 'operator' });
    await run(ids[1], { type: 'CancelRequest', request_id: ids[1], by: 'requester' });

    expect((await list()).map((r) => [r.id, r.status])).to.deep.equal([
      [ids[2], 'provisioned'],
      [ids[1], 'cancelled'],
      [ids[0], 'cancelled'],
    ]);
    expect((await list('?status=provisioned')).map((r) => r.id)).to.deep.equal([ids[2]]);
    const cancelled = await list('?status=cancelled');
    expect(cancelled.map((r) => r.id)).to.deep.equal([ids[1], ids[0]]);
    expect(cancelled[1]).to.deep.include({ cancelled_by: 'operator', reject_reason: 'removed by operator', peering_id: 100, asn: 4242420002, node_id: 'fra1' });
    expect(cancelled[0]).to.deep.include({ cancelled_by: 'requester', reject_reason: null });
    expect(cancelled[1]).to.deep.include({ requested: record(ids[0], 4242420002, 100).requested, provision: record(ids[0], 4242420002, 100).provision });
    expect(cancelled[1].created_at).to.not.equal(cancelled[1].updated_at);

    const fra1 = (await h.client.get('/admin/autopeering/nodes')).body.nodes.find((n: { node_id: string }) => n.node_id === 'fra1');
    expect(fra1.provisioned).to.equal(1);
  });

  it('finds a request by id, by AS and node, and the provisioned request of a peering (for the portal and the peering delete)', async () => {
    expect((await getRequest(h.sys.pool, ids[1]))?.status).to.equal('cancelled');
    expect(await getRequest(h.sys.pool, 999_999)).to.equal(undefined);
    expect((await listRequests(h.sys.pool, { asn: 4242420004 })).map((r) => r.id)).to.deep.equal([ids[2]]);
    expect((await listRequests(h.sys.pool, { nodeId: 'fra1', status: 'cancelled' })).map((r) => r.id)).to.deep.equal([ids[1], ids[0]]);
    expect(await listRequests(h.sys.pool, { nodeId: 'ams1' })).to.deep.equal([]);
    expect((await activeRequestOfPeering(h.sys.pool, 102))?.id).to.equal(ids[2]);
    expect(await activeRequestOfPeering(h.sys.pool, 100)).to.equal(undefined);
  });

  it('answers 422 for an unknown status', async () => {
    for (const q of ['?status=pending', '?status=', '?colour=red']) expectResponse(await h.client.get(`/admin/autopeering/requests${q}`)).status(422);
  });

  it('rebuilds the same rows from the request and node streams', async () => {
    const before = (await h.client.get('/admin/autopeering/requests')).text;
    const nodes = (await h.client.get('/admin/autopeering/nodes')).text;
    await h.sys.projections.rebuild(['autopeering']);
    expect((await h.client.get('/admin/autopeering/requests')).text).to.equal(before);
    expect((await h.client.get('/admin/autopeering/nodes')).text).to.equal(nodes);
  });
});

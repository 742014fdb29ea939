import { expect } from 'chai';
import { expectResponse } from '../../../support/http.js';
import { startBaseRegistryReplica } from '../../../support/registry-replica.js';
import { wg } from '../fleet/support.js';
import { startAgents, type AgentHarness } from '../agent/telemetry-support.js';
import { steadyTraffic } from './series-support.js';

const SERVICE = 'registry-service-token-for-dashboard-specs';

describe('Console dashboard: traffic_by_as names from the registry replica', function () {
  this.timeout(60_000);
  let replica: Awaited<ReturnType<typeof startBaseRegistryReplica>>;
  let h: AgentHarness;

  before(async () => {
    replica = await startBaseRegistryReplica(SERVICE);
    h = await startAgents(['n1'], { REGISTRY_URL: replica.url, REGISTRY_SERVICE_TOKEN: SERVICE });
    expectResponse(await h.admin.post('/ui/registry/sync')).status(200);
    let port = 51801;
    for (const asn of [4242420002, 4242429999]) {
      const peering = await h.admin.post('/admin/nodes/n1/peerings', { name: `as${asn}`, remote_asn: asn });
      expectResponse(peering).status(201);
      expectResponse(await h.admin.post('/admin/nodes/n1/interfaces', { spec: wg(`dn42_${asn % 10_000}`, port++), peering_id: peering.body.id })).status(201);
    }
    h.sys.clock.current = new Date('2026-11-02T10:00:00Z');
    await steadyTraffic(h, 'n1', { dn42_2: 200, dn42_9999: 100 }, 5);
  });
  after(async () => {
    await h?.close();
    await replica?.close();
  });

  it('names the peer ASes the registry knows and leaves the others null', async () => {
    const res = await h.admin.get('/ui/dashboard?as_traffic=1');
    expectResponse(res).status(200);
    expect(res.body.traffic_by_as.table.map((r: { asn: number; name: string | null; share: number }) => [r.asn, r.name, r.share])).to.deep.equal([
      [4242420002, 'BETA-AS', 0.6667],
      [4242429999, null, 0.3333],
    ]);
    expect(res.body.traffic_by_as.series.map((s: { name: string | null }) => s.name)).to.deep.equal(['BETA-AS', null]);
  });
});

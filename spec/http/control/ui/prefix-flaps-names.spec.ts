import { expect } from 'chai';
import { expectResponse } from '../../../support/http.js';
import { startBaseRegistryReplica } from '../../../support/registry-replica.js';
import { startAgents, type AgentHarness } from '../agent/telemetry-support.js';

const SERVICE = 'registry-service-token-for-prefix-flap-specs';

describe('Console prefix flaps: peer and origin names from the registry replica', function () {
  this.timeout(60_000);
  let replica: Awaited<ReturnType<typeof startBaseRegistryReplica>>;
  let h: AgentHarness;

  before(async () => {
    replica = await startBaseRegistryReplica(SERVICE);
    h = await startAgents(['n1'], { REGISTRY_URL: replica.url, REGISTRY_SERVICE_TOKEN: SERVICE });
    expectResponse(await h.admin.post('/ui/registry/sync')).status(200);
    const body = {
      node_id: 'n1',
      captured_at: h.sys.clock.now().toISOString(),
      feed_state: 'established',
      entries: [
        { prefix: '172.21.0.0/24', peer_asn: 4242420002, origin_asn: 4242420001, score: 30, as_path: [4242420002, 4242420001] },
        { prefix: '172.21.0.0/24', peer_asn: 4242429999, origin_asn: 4242429998, score: 10 },
      ],
    };
    expectResponse(await h.agent.n1.post('/agent/prefix-flaps', body)).status(200);
  });
  after(async () => {
    await h?.close();
    await replica?.close();
  });

  it('names the peer and origin ASes the registry knows and leaves the others null', async () => {
    const res = await h.admin.get('/ui/fleet/prefix-flaps?group=prefix');
    expectResponse(res).status(200);
    const [row] = res.body.prefixes;
    expect(row).to.deep.include({ peer_asn: 4242420002, peer_name: 'BETA-AS', origin_asn: 4242420001, origin_name: 'ALPHA-AS', moas: true });
    expect(row.origins).to.deep.equal([
      { asn: 4242420001, name: 'ALPHA-AS' },
      { asn: 4242429998, name: null },
    ]);
    expect(row.peers.map((p: { peer_name: string | null; origin_name: string | null }) => [p.peer_name, p.origin_name])).to.deep.equal([
      ['BETA-AS', 'ALPHA-AS'],
      [null, null],
    ]);
    const flat = await h.admin.get('/ui/fleet/prefix-flaps');
    expect(flat.body.rows.map((r: { peer_name: string | null }) => r.peer_name)).to.deep.equal(['BETA-AS', null]);
  });
});

import { expect } from 'chai';
import { expectResponse } from '../../../support/http.js';
import { startBaseRegistryReplica } from '../../../support/registry-replica.js';
import { startAgents, type AgentHarness } from '../agent/telemetry-support.js';

const SERVICE = 'registry-service-token-for-flap-peer-specs';
const BETA = 4242420002;
const ALPHA = 4242420001;
const UNKNOWN = 4242429999;

describe('Console flap peers: names from the registry replica', function () {
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
        { prefix: '172.21.0.0/24', peer_asn: BETA, origin_asn: ALPHA, score: 30, as_path: [BETA, ALPHA] },
        { prefix: '172.22.0.0/24', peer_asn: UNKNOWN, origin_asn: UNKNOWN, score: 10 },
      ],
    };
    expectResponse(await h.agent.n1.post('/agent/prefix-flaps', body)).status(200);
  });
  after(async () => {
    await h?.close();
    await replica?.close();
  });

  it('names the peers the registry knows, and the peer and origin of the detail rows; the others null', async () => {
    const list = await h.admin.get('/ui/fleet/flap-peers');
    expectResponse(list).status(200);
    expect(list.body.peers.map((p: { asn: number; name: string | null }) => [p.asn, p.name])).to.deep.equal([
      [BETA, 'BETA-AS'],
      [UNKNOWN, null],
    ]);
    const detail = await h.admin.get(`/ui/fleet/flap-peers/${BETA}`);
    expectResponse(detail).status(200);
    expect(detail.body.name).to.equal('BETA-AS');
    expect(detail.body.prefixes[0]).to.deep.include({ peer_name: 'BETA-AS', origin_name: 'ALPHA-AS' });
  });
});

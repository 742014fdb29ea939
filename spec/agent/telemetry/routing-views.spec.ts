import { expect } from 'chai';
import { runCommand } from '../../../agent/exec.js';
import { startTelemetry, type Telemetry } from '../../../agent/telemetry/index.js';
import { startBirdPair, type BirdPair } from '../support/bird.js';
import { startOpsServer, testAgent, type OpsServer, type TestAgent } from '../support/ops.js';
import { eventually } from '../../support/wait.js';

/** Only the routing table's loop runs soon; the others wait an hour. */
const ROUTING_ONLY = { snapshotMs: 3_600_000, trafficMs: 3_600_000, reresolveMs: 3_600_000, flapsMs: 3_600_000, routingMs: 3_600_000 };

describe('routing views of a table a real agent read from a real BIRD', function () {
  this.timeout(60_000);
  let server: OpsServer;
  let agent: TestAgent;
  let birds: BirdPair;
  let telemetry: Telemetry | undefined;

  before(async () => {
    server = await startOpsServer();
    agent = await testAgent(server);
    birds = await startBirdPair(agent.stateDir);
  });
  after(async () => {
    await telemetry?.stop();
    await birds?.stop();
    await agent?.cleanup();
    await server?.close();
  });

  it('shows the routes BIRD holds in the summary, the prefix search and the origins', async () => {
    // Given BIRD A with its statics and what B announced over the two sessions
    await eventually(
      async () => /Total: 6 of 6 routes/.test((await runCommand([...birds.birdcA, 'show', 'route', 'count'])).stdout),
      20_000,
      'both sessions established with their routes imported',
    );
    const admin = server.control.admin;
    const base = `/admin/nodes/${server.nodeId}/routing`;

    // When the agent reads and reports the table (its first round runs at start)
    telemetry = startTelemetry({ ...agent.rt, commands: { ...agent.rt.commands, birdc: birds.birdcA } }, agent.ring, ROUTING_ONLY);
    const summary = await eventually(
      async () => {
        const res = await admin.get(`${base}/summary`);
        return res.status === 200 ? res.body : null;
      },
      15_000,
      'a routing summary',
    );

    // Then every view shows that one table
    expect(summary).to.include({ node_id: server.nodeId, size: 6, announced: null, withdrawn: null });
    expect(summary.size_v4 + summary.size_v6).to.equal(6);
    const all = (await admin.get(`${base}/prefixes`)).body;
    expect(all.total).to.equal(6);
    expect(all.rpki_counts === null).to.equal(!summary.rpki_observed);
    expect(all.routes.find((r: { prefix: string }) => r.prefix === '172.21.0.0/24')).to.deep.include({
      protocol: 'peer_b',
      origin_asn: 4242420002,
      as_path: [4242420002],
      local: false,
    });
    const fromB = (await admin.get(`${base}/prefixes?path_asn=4242420002`)).body;
    expect(fromB.routes.map((r: { prefix: string }) => r.prefix)).to.include.members(['172.21.0.0/24', 'fd42:2::/48']);
    expect(fromB.routes.every((r: { local: boolean }) => !r.local)).to.equal(true);
    const local = (await admin.get(`${base}/prefixes?scope=local&q=172.20.1.0`)).body;
    expect(local.routes.map((r: { prefix: string; protocol: string }) => [r.prefix, r.protocol])).to.deep.equal([['172.20.1.0/24', 's4']]);
    const origins = (await admin.get(`${base}/origins`)).body.origins;
    expect(origins.find((o: { asn: number }) => o.asn === 4242420002)).to.deep.include({
      name: null,
      count_v4: fromB.routes.filter((r: { family: number }) => r.family === 4).length,
    });
    const fleet = (await admin.get('/admin/routing/fleet')).body;
    expect(fleet.summary).to.include({ nodes_reporting: 1, size: 6 });
  });
});

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { startTelemetry, type Telemetry } from '../../../../agent/telemetry/index.js';
import { ibgpProtocolName } from '../../../../domain/desired-state/bird-names.js';
import { spawnBird, type BirdProcess } from '../../../agent/support/bird-process.js';
import { startOpsServer, testAgent, type OpsServer, type TestAgent } from '../../../agent/support/ops.js';
import { expectResponse } from '../../../support/http.js';
import { eventually } from '../../../support/wait.js';
import { node } from '../fleet/support.js';

const QUIET = { snapshotMs: 3_600_000, trafficMs: 3_600_000, reresolveMs: 3_600_000, flapsMs: 3_600_000 };

/**
 * The hints end to end: a real BIRD whose protocols carry the names the agent
 * renders for an iBGP neighbour (`d-1` needs apostrophes: `'ibgp_d-1_v4'`), the
 * real agent telemetry reading `birdc show route all` and posting the table, and
 * the view counting what BIRD showed. The routes come from static protocols of
 * those names: an iBGP session needs a second router on the neighbour's loopback,
 * and the name, not the protocol type, is what the view matches.
 */
describe('console: internal-topology hints from a real BIRD through the real agent telemetry', function () {
  this.timeout(60_000);
  let server: OpsServer;
  let agent: TestAgent;
  let bird: BirdProcess;
  let telemetry: Telemetry | undefined;

  before(async () => {
    server = await startOpsServer('a');
    const admin = server.control.admin;
    expectResponse(
      await admin.post('/admin/nodes', node('d-1', { router_id: '172.20.0.4', loopback_ipv4: '172.20.0.4', loopback_ipv6: 'fd42:4242:4::1' })),
    ).status(201);
    expectResponse(await admin.patch('/admin/nodes/a', { base_template: { bird: { internal_topology: { routers: ['d-1'] } } } })).status(200);
    expectResponse(await admin.post('/admin/nodes/a/interfaces', { spec: { name: 'dn42_x', listen_port: 51801 } })).status(201);
    agent = await testAgent(server);
    const v4 = ibgpProtocolName({ node_id: 'd-1' }, 'v4');
    expect(v4).to.equal("'ibgp_d-1_v4'");
    const conf = join(agent.stateDir, 'bird.conf');
    await writeFile(
      conf,
      `router id 172.20.0.1;\nprotocol device {}\nprotocol static ${v4} { ipv4; route 172.20.0.4/32 blackhole; route 172.20.5.0/24 blackhole; route 172.20.6.0/24 blackhole; }\n`,
    );
    bird = await spawnBird(conf, join(agent.stateDir, 'bird.ctl'));
  });
  after(async () => {
    await telemetry?.stop();
    await bird?.stop();
    await agent?.cleanup();
    await server?.close();
  });

  it("counts the routes BIRD shows under the neighbour's session name and finds its loopback", async () => {
    expectResponse(await server.control.admin.get('/ui/nodes/a/internal-topology'))
      .status(200)
      .body({ captured_at: null });
    telemetry = startTelemetry({ ...agent.rt, commands: { ...agent.rt.commands, birdc: ['birdc', '-s', bird.socket] } }, agent.ring, QUIET);
    const view = await eventually(
      async () => {
        const res = await server.control.admin.get('/ui/nodes/a/internal-topology');
        return res.body.captured_at ? res.body : null;
      },
      { timeoutMs: 30_000, what: 'a view with the posted routing table' },
    );
    expect(view.routers).to.have.length(1);
    const [d] = view.routers;
    expect(d.sessions).to.deep.equal([
      { protocol: 'ibgp_d-1_v4', family: 'v4', neighbor: '172.20.0.4', rib_routes: 3, in_rib: true },
      { protocol: 'ibgp_d-1_v6', family: 'v6', neighbor: 'fd42:4242:4::1', rib_routes: 0, in_rib: false },
    ]);
    expect([d.sources, d.rib_routes, d.in_rib]).to.deep.equal([['template'], 3, true]);
  });
});

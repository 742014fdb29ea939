import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import type { DesiredState } from '../../../domain/desired-state/schema.js';
import { runCommand } from '../../../agent/exec.js';
import { startTelemetry, type Telemetry } from '../../../agent/telemetry/index.js';
import { expectResponse } from '../../support/http.js';
import { eventually } from '../../support/wait.js';
import { spawnBird, type BirdProcess } from '../support/bird-process.js';
import { createNetns, type NetNs } from '../support/netns.js';
import { startOpsServer, testAgent, type OpsServer, type TestAgent } from '../support/ops.js';

/**
 * Prefix flaps end to end over a real two-hop path: C (AS4242420003) originates
 * 172.23.0.0/24 and 172.23.1.0/24 to its upstream B (AS4242420002), which
 * relays them to our node A (AS4242420001) with its own AS prepended once, so
 * A's path is B B C. Three BIRD daemons in three network namespaces (A-B and
 * B-C joined by veth pairs, BGP on port 179 without touching the host). C
 * withdraws and re-announces the first prefix three times; the agent's flap
 * collector looks at A every 300 ms and reports to a real control server, and
 * `/ui/fleet/prefix-flaps` shows the row entering at B, originated by C, with
 * the path B C (prepends collapsed). Needs root (CI runs as root); skipped
 * without network namespaces, as the other namespace specs.
 */

const OWN = 4242420001;
const UPSTREAM = 4242420002;
const ORIGIN = 4242420003;
const FLAPPING = '172.23.0.0/24';
const STEADY = '172.23.1.0/24';
const FLAPS = 3;
const FLAPS_ONLY = { snapshotMs: 3_600_000, trafficMs: 3_600_000, reresolveMs: 3_600_000, routingMs: 3_600_000, flapsMs: 300 };

describe('prefix flaps over a two-hop path from real BIRD daemons in namespaces to /ui/fleet/prefix-flaps', function () {
  this.timeout(60_000);
  const namespaces: NetNs[] = [];
  const birds: BirdProcess[] = [];
  let server: OpsServer;
  let agent: TestAgent;
  let telemetry: Telemetry | undefined;
  let birdcA: string[];
  let birdcC: string[];

  const birdc = async (argv: string[], ...command: string[]) => {
    const r = await runCommand([...argv, ...command]);
    expect(r.code, r.stderr).to.equal(0);
    return r.stdout;
  };
  /** Whether A has the route from B (`Network not found` makes birdc exit 1). */
  const aHas = async (prefix: string) => (await runCommand([...birdcA, 'show', 'route', 'for', prefix])).stdout.includes('[peer_b ');
  /** A's import changes on peer_b (updates plus withdrawals), as BIRD counts them. */
  const importChanges = async () => {
    const lines = (await birdc(birdcA, 'show', 'protocols', 'all', 'peer_b')).split('\n').filter((l) => /Import (updates|withdraws):/.test(l));
    return lines.reduce((sum, l) => sum + Number(l.trim().split(/\s+/)[2]), 0);
  };

  before(async function () {
    for (let i = 0; i < 3; i++) {
      const ns = await createNetns();
      if ('unavailable' in ns) {
        await Promise.all(namespaces.map((n) => n.remove()));
        namespaces.length = 0;
        this.skip();
      }
      namespaces.push(ns as NetNs);
    }
    const [a, b, c] = namespaces;
    const link = async (from: NetNs, fromDev: string, fromAddr: string, to: NetNs, toDev: string, toAddr: string) => {
      expect((await from.ip('link', 'add', fromDev, 'type', 'veth', 'peer', 'name', toDev, 'netns', to.name)).code).to.equal(0);
      await from.ip('addr', 'add', fromAddr, 'dev', fromDev);
      await to.ip('addr', 'add', toAddr, 'dev', toDev);
      await from.ip('link', 'set', fromDev, 'up');
      await to.ip('link', 'set', toDev, 'up');
    };
    await link(a, 'vA', '10.99.1.1/24', b, 'vBa', '10.99.1.2/24');
    await link(b, 'vBc', '10.99.2.2/24', c, 'vC', '10.99.2.3/24');

    server = await startOpsServer();
    agent = await testAgent(server);
    agent.applied.desired = { node: { asn: OWN } } as unknown as DesiredState;
    const fast = 'connect delay time 1; connect retry time 2;';
    const confs = {
      a: `router id 10.99.1.1;
protocol device {}
protocol bgp peer_b { local 10.99.1.1 as ${OWN}; neighbor 10.99.1.2 as ${UPSTREAM}; ${fast} ipv4 { import all; export none; }; }
`,
      b: `router id 10.99.1.2;
protocol device {}
protocol bgp peer_a { local 10.99.1.2 as ${UPSTREAM}; neighbor 10.99.1.1 as ${OWN}; ${fast}
  ipv4 { import none; export filter { bgp_path.prepend(${UPSTREAM}); accept; }; }; }
protocol bgp peer_c { local 10.99.2.2 as ${UPSTREAM}; neighbor 10.99.2.3 as ${ORIGIN}; ${fast} ipv4 { import all; export none; }; }
`,
      c: `router id 10.99.2.3;
protocol device {}
protocol static flapping { ipv4; route ${FLAPPING} blackhole; }
protocol static steady { ipv4; route ${STEADY} blackhole; }
protocol bgp peer_b { local 10.99.2.3 as ${ORIGIN}; neighbor 10.99.2.2 as ${UPSTREAM}; ${fast} ipv4 { import none; export all; }; }
`,
    };
    for (const [i, name] of (['a', 'b', 'c'] as const).entries()) {
      await writeFile(join(agent.stateDir, `${name}.conf`), confs[name]);
      birds.push(await spawnBird(join(agent.stateDir, `${name}.conf`), join(agent.stateDir, `${name}.ctl`), [], ['ip', 'netns', 'exec', namespaces[i].name]));
    }
    birdcA = ['birdc', '-s', birds[0].socket];
    birdcC = ['birdc', '-s', birds[2].socket];
    await eventually(async () => (await aHas(FLAPPING)) && aHas(STEADY), 30_000, "both of C's routes at A through B");
  });
  after(async () => {
    await telemetry?.stop();
    await Promise.all(birds.map((b) => b.stop()));
    await agent?.cleanup();
    await server?.close();
    await Promise.all(namespaces.map((n) => n.remove()));
  });

  it('shows the flapping prefix entering at the upstream, originated behind it, with the two-hop path, counted as BIRD counted it', async () => {
    // Given A's path for the prefix (B prepended itself once) and the agent's first report in (its baseline)
    expect(await birdc(birdcA, 'show', 'route', 'for', FLAPPING, 'all')).to.match(new RegExp(`BGP.as_path: ${UPSTREAM} ${UPSTREAM} ${ORIGIN}\\b`));
    telemetry = startTelemetry({ ...agent.rt, commands: { ...agent.rt.commands, birdc: birdcA } }, agent.ring, FLAPS_ONLY);
    const feed = async () => (await server.control.sys.pool.query(`SELECT feed_state FROM prefix_flap_feeds WHERE node_id = $1`, [server.nodeId])).rows[0];
    expect(await eventually(feed, 10_000, 'a first prefix-flaps report')).to.deep.equal({ feed_state: 'established' });
    const before = await importChanges();
    const started = Date.now();

    // When C withdraws and re-announces the prefix three times, each step seen at A before the next
    for (let i = 0; i < FLAPS; i++) {
      await birdc(birdcC, 'disable', 'flapping');
      await eventually(async () => !(await aHas(FLAPPING)), 10_000, `withdrawal ${i + 1} at A`);
      await birdc(birdcC, 'enable', 'flapping');
      await eventually(() => aHas(FLAPPING), 10_000, `re-announcement ${i + 1} at A`);
    }
    const changes = (await importChanges()) - before;
    expect(changes).to.equal(2 * FLAPS);

    // Then the console's prefix flap list shows the row once a report carries every change
    const list = async () => {
      server.control.sys.clock.current = new Date();
      const res = await server.control.admin.get('/ui/fleet/prefix-flaps?min_score=0');
      expectResponse(res).status(200);
      return res.body;
    };
    const body = await eventually(
      async () => {
        const b = await list();
        return b.rows.find((r: { prefix: string; total_changes: number | null }) => r.prefix === FLAPPING && r.total_changes === changes) && b;
      },
      15_000,
      `a report with all ${2 * FLAPS} changes`,
    );
    const [row] = body.rows;
    expect(body.rows).to.have.length(1);
    expect(row).to.deep.include({
      prefix: FLAPPING,
      peer_asn: UPSTREAM,
      origin_asn: ORIGIN,
      as_path: [UPSTREAM, ORIGIN],
      moas: false,
      flapping: false,
      total_changes: 2 * FLAPS,
    });
    expect(row.nodes.map((n: { node_id: string; changes: number }) => [n.node_id, n.changes])).to.deep.equal([[server.nodeId, 2 * FLAPS]]);
    // six changes, none before the first withdrawal, decayed with the 10-minute half-life (the agent rounds to 0.001)
    expect(row.max_score).to.be.at.most(2 * FLAPS);
    expect(row.max_score).to.be.at.least(2 * FLAPS * Math.pow(2, -(Date.now() - started) / 600_000) - 0.001);
    expect(body.feeds.map((f: { node_id: string; feed_state: string }) => [f.node_id, f.feed_state])).to.deep.equal([[server.nodeId, 'established']]);
    // The steady prefix (same path, never moved) has no row; the grouped form names the same direction
    const grouped = (await server.control.admin.get('/ui/fleet/prefix-flaps?group=prefix&min_score=0')).body.prefixes;
    expect(grouped.map((p: { prefix: string; peer_asn: number; origin_asn: number }) => [p.prefix, p.peer_asn, p.origin_asn])).to.deep.equal([
      [FLAPPING, UPSTREAM, ORIGIN],
    ]);
  });
});

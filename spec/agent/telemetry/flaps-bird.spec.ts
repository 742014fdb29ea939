import { expect } from 'chai';
import type { DesiredState } from '../../../domain/desired-state/schema.js';
import { runCommand } from '../../../agent/exec.js';
import { FlapCollector } from '../../../agent/telemetry/flaps/collector.js';
import { startTelemetry, type Telemetry } from '../../../agent/telemetry/index.js';
import { prefixFlapsOf } from '../../../infra/telemetry/store.js';
import { startBirdPair, type BirdPair } from '../support/bird.js';
import { startOpsServer, testAgent, type OpsServer, type TestAgent } from '../support/ops.js';
import { eventually } from '../../support/wait.js';

/** Node A is AS4242420001; B (AS4242420002) announces 172.21.0.0/24 from its static protocol `s4` alone. */
const FLAPPING = '172.21.0.0/24';
const PEER_B = 4242420002;
const SLOW = { snapshotMs: 3_600_000, trafficMs: 3_600_000, reresolveMs: 3_600_000, routingMs: 3_600_000 };

describe('prefix flaps from real BIRD daemons to a real control server', function () {
  this.timeout(60_000);
  let server: OpsServer;
  let agent: TestAgent;
  let birds: BirdPair;
  let telemetry: Telemetry | undefined;

  const birdc = async (argv: string[], ...command: string[]) => {
    const r = await runCommand([...argv, ...command]);
    expect(r.code, r.stderr).to.equal(0);
    return r.stdout;
  };
  /** (`Network not found` makes birdc exit 1.) */
  const aHasFlapping = async () => (await runCommand([...birds.birdcA, 'show', 'route', 'for', FLAPPING])).stdout.includes('[peer_b ');
  /** A's accepted import changes on peer_b (updates plus withdrawals). */
  const peerBChanges = async () => {
    const stats = (await birdc(birds.birdcA, 'show', 'protocols', 'all', 'peer_b')).split('\n').filter((l) => /Import (updates|withdraws):/.test(l));
    return stats.reduce((sum, l) => sum + Number(l.trim().split(/\s+/).at(-1)), 0);
  };
  const look = async () => ({ routes: await birdc(birds.birdcA, 'show', 'route', 'all'), protocols: await birdc(birds.birdcA, 'show', 'protocols', 'all') });
  const feed = async () =>
    (await server.control.sys.pool.query(`SELECT feed_state, entries FROM prefix_flap_feeds WHERE node_id = $1`, [server.nodeId])).rows[0];
  const stored = async () => (await prefixFlapsOf(server.control.sys.pool, server.nodeId)).find((r) => r.prefix === FLAPPING && r.peer_asn === PEER_B);

  beforeEach(async () => {
    server = await startOpsServer();
    agent = await testAgent(server);
    agent.applied.desired = { node: { asn: 4242420001 } } as unknown as DesiredState;
    birds = await startBirdPair(agent.stateDir);
    await eventually(
      async () => /Total: 6 of 6 routes/.test((await runCommand([...birds.birdcA, 'show', 'route', 'count'])).stdout),
      20_000,
      'both sessions up with all routes',
    );
  });
  afterEach(async () => {
    await telemetry?.stop();
    telemetry = undefined;
    await birds.stop();
    await agent.cleanup();
    await server.close();
  });

  it('scores a withdrawal and a re-announcement by B, attributed to B, and the server holds the score and the feed state', async () => {
    // Given the agent's flap loop looking at A every 300 ms, with its first report in
    telemetry = startTelemetry({ ...agent.rt, commands: { ...agent.rt.commands, birdc: birds.birdcA } }, agent.ring, { ...SLOW, flapsMs: 300 });
    expect(await eventually(feed, 10_000, 'a first prefix-flaps report')).to.deep.equal({ feed_state: 'established', entries: 0 });

    // When B withdraws the prefix, and announces it again once a report shows the withdrawal
    await birdc(birds.birdcB, 'disable', 's4');
    const withdrawn = await eventually(async () => (await stored())?.flaps === 1 && stored(), 10_000, 'the withdrawal scored');
    expect(await aHasFlapping()).to.equal(false);
    await birdc(birds.birdcB, 'enable', 's4');

    // Then the server holds two changes for (prefix, B), origin B, decayed by well under a percent
    const row = await eventually(async () => ((await stored())?.flaps === 2 ? stored() : null), 10_000, 'the re-announcement scored');
    expect(row).to.include({ prefix: FLAPPING, peer_asn: PEER_B, origin_asn: PEER_B, flaps: 2 });
    expect(row!.score).to.be.within(1.98, 2);
    expect(withdrawn).to.include({ origin_asn: PEER_B });
    // with the path evidence of the new report fields: B's path (B is also the origin)
    const evidence = await server.control.sys.pool.query(`SELECT as_path::text AS as_path FROM prefix_flaps WHERE node_id = $1 AND prefix = $2`, [
      server.nodeId,
      FLAPPING,
    ]);
    expect(evidence.rows).to.deep.equal([{ as_path: `{${PEER_B}}` }]);
    expect(
      (await server.control.sys.pool.query(`SELECT total_changes FROM prefix_flap_feeds WHERE node_id = $1`, [server.nodeId])).rows[0].total_changes,
    ).to.be.a('number');
    expect(Date.parse(row!.last_flap_at!)).to.be.above(Date.parse(withdrawn!.last_flap_at!));
    // And B's other prefixes, which did not move, have no row
    expect((await prefixFlapsOf(server.control.sys.pool, server.nodeId)).map((r) => r.prefix)).to.deep.equal([FLAPPING]);

    // When BIRD on A stops, the reports go on with the feed down and the scores kept
    await birds.stop();
    expect(await eventually(async () => (await feed())?.feed_state === 'down' && feed(), 10_000, 'the feed down')).to.deep.equal({
      feed_state: 'down',
      entries: 1,
    });
    expect(agent.ring.recent().map((e) => e.message)).to.include('prefix flaps: cannot read BIRD; the feed is down');
  });

  it('counts every flap of a burst between two looks from BIRD import counters, and the server stores that score', async function () {
    // Seen twice in CI on a loaded machine (once a change stamp on B's IPv6 session, once a burst
    // weighted 1, not reproduced in 30 runs here, idle or loaded): one retry, and a failure says what
    // A's peer_b looked like at both looks.
    this.retries(1);
    // Given a first look at A
    const collector = new FlapCollector();
    const first = await look();
    expect(collector.observe(first, 4242420001, Date.now())).to.deep.equal([]);
    const before = await peerBChanges();

    // When B flaps the prefix five times before the next look
    for (let i = 0; i < 5; i++) {
      await birdc(birds.birdcB, 'disable', 's4');
      await eventually(async () => !(await aHasFlapping()), 5000, 'withdrawn');
      await birdc(birds.birdcB, 'enable', 's4');
      await eventually(aHasFlapping, 5000, 're-announced');
    }
    expect((await peerBChanges()) - before).to.equal(10);
    // (B's IPv6 session is left out: its routes, whose next hop BIRD resolves again now and then, can show a change
    // stamp between two looks on a busy machine; CI saw it once. This test is about the IPv4 burst on peer_b.)
    const second = await look();
    const events = collector.observe(second, 4242420001, Date.now()).filter((e) => e.protocol !== 'peer_b6');
    const peerB = (text: string) => text.slice(text.indexOf('peer_b '), text.indexOf('peer_b6 '));
    const looks = `A's peer_b at the first look:\n${peerB(first.protocols)}\nat the second:\n${peerB(second.protocols)}`;

    // Then the look saw one changed route, worth ten changes, and the server takes the report
    expect(events.map((e) => [e.kind, e.prefix, e.protocol, e.peer_asn])).to.deep.equal([['change', FLAPPING, 'peer_b', PEER_B]]);
    const report = collector.report(server.nodeId, Date.now());
    expect(report.entries.filter((e) => e.prefix === FLAPPING).map((e) => e.peer_asn)).to.deep.equal([PEER_B]);
    const answer = await agent.rt.request('POST', '/agent/prefix-flaps', report);
    expect({ status: answer.status, body: answer.body }).to.deep.equal({
      status: 200,
      body: { accepted: true, node_id: server.nodeId, entries: report.entries.length, feed_state: 'established' },
    });
    expect(report.entries.find((e) => e.prefix === FLAPPING)?.flaps, looks).to.equal(10);
    const row = await stored();
    expect(row).to.include({ flaps: 10, origin_asn: PEER_B });
    expect(row!.score).to.be.closeTo(10, 0.01);
  });
});

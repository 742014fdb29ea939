import { copyFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import type { DesiredState } from '../../../domain/desired-state/schema.js';
import { runCommand } from '../../../agent/exec.js';
import { startTelemetry, type Telemetry } from '../../../agent/telemetry/index.js';
import { readReportedVersion } from '../../../agent/update/marker.js';
import { startBirdPair, type BirdPair } from '../support/bird.js';
import { startOpsServer, testAgent, type OpsServer, type TestAgent } from '../support/ops.js';
import { eventually } from '../../support/wait.js';

const FAKE_WG = fileURLToPath(new URL('../support/fake-wg.mjs', import.meta.url));
const DUMP = fileURLToPath(new URL('./fixtures/wg-show-all-dump.txt', import.meta.url));
const AMS_PEER = 'ZKlpbW8MJzYf+IP4mAIVHFr8JXmKqAOH1o+KbPlBd0o=';
const FRA2_PEER = 'ItrbwShDBDqIxKbM8ZCnBLvJhptEp9wxzwJwNojvGFw=';
const SLOW = { snapshotMs: 3_600_000, trafficMs: 3_600_000, reresolveMs: 3_600_000 };

/** A desired state with just the interfaces the re-resolution reads. */
const desiredWith = (interfaces: { name: string; endpoint: string | null; key: string | null }[]) =>
  ({ interfaces: interfaces.map((i) => ({ name: i.name, peer: { endpoint: i.endpoint, public_key: i.key } })) }) as unknown as DesiredState;

describe('agent telemetry against a real control server', function () {
  this.timeout(30_000);
  let server: OpsServer;
  let agent: TestAgent;
  let telemetry: Telemetry | undefined;
  const health = async () => (await server.control.admin.get(`/admin/nodes/${server.nodeId}/health`)).body;

  before(async () => {
    server = await startOpsServer();
  });
  afterEach(async () => {
    await telemetry?.stop();
    telemetry = undefined;
    await agent.cleanup();
  });
  after(() => server.close());

  describe('runtime snapshot from real BIRD daemons', () => {
    let birds: BirdPair;
    before(async () => {
      agent = await testAgent(server);
      birds = await startBirdPair(agent.stateDir);
    });
    after(() => birds.stop());

    it('reports the BGP protocols, interfaces and self-metrics, and writes the health-gate marker once accepted', async () => {
      // Given two BIRDs that have established their sessions, and an agent that logged a warning and an error
      const rt = { ...agent.rt, commands: { ...agent.rt.commands, birdc: birds.birdcA } };
      await eventually(
        async () => {
          const { stdout } = await runCommand([...birds.birdcA, 'show', 'route', 'count']);
          return /Total: 6 of 6 routes/.test(stdout);
        },
        20_000,
        'both sessions established with their routes imported',
      );
      agent.applied.generation = 7;
      agent.applied.failures = 2;
      const logged = Date.now();
      rt.logger.warn('wireguard interface flapped');
      rt.logger.error('birdc configure failed: syntax error');

      // When telemetry starts (the first snapshot goes out at once)
      telemetry = startTelemetry(rt, agent.ring, SLOW);

      // Then the server holds the snapshot as the agent read it from BIRD
      const h = await eventually(
        async () => {
          const body = await health();
          return body.snapshot ? body : null;
        },
        10_000,
        'a stored snapshot',
      );
      const byName = Object.fromEntries(h.snapshot.bgp_protocols.map((p: { name: string }) => [p.name, p]));
      expect(Object.keys(byName)).to.deep.equal(['peer_b', 'peer_b6', 'dn42_down', 'dn42_off']);
      expect(byName.peer_b).to.deep.include({ state: 'established', remote_asn: 4242420002, routes_imported: 1, routes_exported: 2, info: 'Established' });
      expect(byName.peer_b6).to.deep.include({ state: 'established', routes_imported: 2, routes_exported: 1 });
      // Per family: each of these sessions has one channel, so the other family is null (an MP-BGP session fills both).
      expect(byName.peer_b).to.deep.include({ routes_imported_v4: 1, routes_exported_v4: 2, routes_imported_v6: null, routes_exported_v6: null });
      expect(byName.peer_b6).to.deep.include({ routes_imported_v4: null, routes_exported_v4: null, routes_imported_v6: 2, routes_exported_v6: 1 });
      // Never established; which of these BIRD shows depends on where its connect-retry cycle is
      // when the snapshot is taken (Down between a refused connect and the next attempt, under load).
      expect(byName.dn42_down.state).to.be.oneOf(['active', 'connect', 'idle', 'down']);
      expect(byName.dn42_down.routes_imported ?? 0).to.equal(0);
      expect(byName.dn42_off).to.deep.include({ state: 'down', routes_imported: null });
      expect(h).to.include({ bgp_established: 2, bgp_total: 4 });
      expect(h.snapshot.generation).to.equal(7);
      expect(h.snapshot.interfaces.map((i: { name: string }) => i.name)).to.include('lo');
      expect(h.snapshot.wireguard_interfaces).to.deep.equal([]);
      expect(h.snapshot.self_metrics).to.include({
        total_failures: 2,
        log_warning_count: 1,
        log_error_count: 1,
        last_error_message: 'birdc configure failed: syntax error',
      });
      expect(h.snapshot.self_metrics.rss).to.be.above(10_000_000);
      expect(Date.parse(h.snapshot.self_metrics.last_error_at)).to.be.within(logged - 1000, Date.now());
      expect(h.snapshot.self_metrics.cpu).to.be.a('number').and.at.least(0);
      // And the routing table holds A's best routes (its statics, and what B announced)
      const table = await eventually(
        async () => {
          const { rows } = await server.control.sys.pool.query(
            `SELECT prefix, protocol, origin_asn::float8 AS origin_asn, as_path::float8[] AS as_path, rpki, local FROM routing_routes WHERE node_id = $1 ORDER BY seq`,
            [server.nodeId],
          );
          return rows.length > 0 ? (rows as { prefix: string }[]) : undefined;
        },
        10_000,
        'a stored routing table',
      );
      const route = (prefix: string) => table.find((r) => r.prefix === prefix);
      expect(route('172.21.0.0/24')).to.deep.equal({
        prefix: '172.21.0.0/24',
        protocol: 'peer_b',
        origin_asn: 4242420002,
        as_path: [4242420002],
        rpki: null,
        local: false,
      });
      expect(route('fd42:2::/48')).to.include({ protocol: 'peer_b6', local: false });
      expect(route('172.20.1.0/24')).to.include({ protocol: 's4', local: true });
      // And the health gate's marker names this version
      expect(await eventually(() => readReportedVersion(agent.stateDir), 5000, 'the marker')).to.include({ version: '1.0.1', pid: process.pid });
    });
  });

  describe('WireGuard traffic and endpoint re-resolution (wg stand-in: this machine has no kernel WireGuard)', () => {
    let dump: string;
    let wgLog: string;
    beforeEach(async () => {
      agent = await testAgent(server);
      dump = join(agent.stateDir, 'dump.txt');
      wgLog = join(agent.stateDir, 'wg.log');
      await copyFile(DUMP, dump);
    });
    const withWg = () => ({ ...agent.rt, commands: { ...agent.rt.commands, wg: ['node', FAKE_WG, dump, wgLog], birdc: ['false'] } });

    it('posts the traffic sample: the server sums rx and tx over every peer', async () => {
      const rt = withWg();
      const posted: unknown[] = [];
      const request = rt.request;
      rt.request = (async (method: 'GET' | 'POST', path: string, body?: unknown) => {
        const answer = await request(method, path, body);
        if (path === '/agent/wireguard-traffic') posted.push(answer.body);
        return answer;
      }) as typeof rt.request;
      telemetry = startTelemetry(rt, agent.ring, SLOW);
      const [answer] = await eventually(() => (posted.length ? posted : null), 10_000, 'a traffic sample');
      expect(answer).to.deep.equal({ accepted: true, node_id: 'fra1', rx_bytes: 123456, tx_bytes: 654321, peer_count: 3 });
    });

    it('re-resolves host-name endpoints, sets only the changed one, reports each with its error, and sets nothing the second time', async () => {
      // Given a desired state: a host name whose address moved, an unresolvable name, and an address endpoint
      agent.applied.desired = desiredWith([
        { name: 'dn42_ams', endpoint: 'localhost:51820', key: AMS_PEER },
        { name: 'int_fra2', endpoint: 'nowhere.invalid:52801', key: FRA2_PEER },
        { name: 'dn42_lit', endpoint: '192.0.2.10:51820', key: AMS_PEER },
      ]);
      const rt = withWg();

      // When telemetry runs its re-resolution round twice
      telemetry = startTelemetry(rt, agent.ring, { ...SLOW, reresolveMs: 300 });
      const events = await eventually(
        async () => {
          const res = await server.control.admin.get(`/admin/nodes/fra1/status-events?kind=reresolve`);
          return res.body.events.length >= 2 ? res.body.events : null;
        },
        15_000,
        'two re-resolution reports',
      );

      // Then wg was told once, with the resolved address, and the reports say what happened
      expect((await readFile(wgLog, 'utf8')).trim().split('\n')).to.deep.equal([`set dn42_ams peer ${AMS_PEER} endpoint 127.0.0.1:51820`]);
      const [second, first] = events;
      // (the server calls a report with any error `error`, before `reresolved`)
      expect([first.status, second.status]).to.deep.equal(['error', 'error']);
      expect(first.payload.interfaces).to.have.length(2);
      expect(first.payload.interfaces[0]).to.deep.equal({
        interface: 'dn42_ams',
        endpoint: 'localhost:51820',
        previous_address: '198.51.100.7:51820',
        address: '127.0.0.1:51820',
        reresolved: true,
        error: null,
      });
      expect(first.payload.interfaces[1]).to.include({ interface: 'int_fra2', reresolved: false, address: null, previous_address: '[2001:db8::7]:52801' });
      expect(first.payload.interfaces[1].error).to.match(/^cannot resolve nowhere\.invalid/);
      expect(second.payload.interfaces[0]).to.include({ previous_address: '127.0.0.1:51820', address: '127.0.0.1:51820', reresolved: false });
    });
  });
});

import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import pino from 'pino';
import { runCommand } from '../../../agent/exec.js';
import { callControl } from '../../../agent/http.js';
import { LogRing } from '../../../agent/logs/ring.js';
import { DEFAULT_COMMANDS, type AgentRuntime, type AppliedState } from '../../../agent/runtime.js';
import { startTelemetry, type Telemetry } from '../../../agent/telemetry/index.js';
import { createControlApp } from '../../../http/control/app.js';
import { migrate } from '../../../infra/db/migrate.js';
import { localRoaSource } from '../../../infra/registry/roa-source.js';
import { registryMigrations } from '../../../infra/registry/store.js';
import { RegistrySyncer } from '../../../infra/registry/sync.js';
import { api, expectResponse } from '../../support/http.js';
import { RegistryRepo, registryEnv, rpsl, writeBaseRegistry } from '../../support/registry.js';
import { createTestSystem, startApp, type TestSystem } from '../../support/system.js';
import { eventually } from '../../support/wait.js';
import { spawnBird, type BirdProcess } from '../support/bird-process.js';
import { runAgent, tempDir, writeAgentConfig } from '../support/core.js';
import { createNetns, type NetNs } from '../support/netns.js';

/**
 * RPKI end to end: route objects in a registry repository, the replica's ROAs,
 * the control server's `/agent/roas`, the real agent (`--once --mode apply`)
 * rendering the ROA tables for a real BIRD (node A, AS4242420001), an eBGP
 * peer BIRD (B, AS4242420002) announcing valid, invalid and uncovered
 * routes, the agent's routing-table report with each route's state, and the
 * routing views showing them. A and B run in two network namespaces joined by
 * a veth pair, so both speak BGP on port 179 without touching the host.
 */

const ADMIN_TOKEN = 'rpki-e2e-admin-token-0123456789';
const REGISTRY_TOKEN = 'rpki-e2e-registry-token';
const OWN = 4242420001;
const PEER = 4242420002;
const OTHER = 4242420003;
const ROUTING_ONLY = { snapshotMs: 3_600_000, trafficMs: 3_600_000, reresolveMs: 3_600_000, flapsMs: 3_600_000, routingMs: 3_600_000 };

const route = (type: 'route' | 'route6', prefix: string, origin: number, maxLength?: number) =>
  rpsl([
    [type, prefix],
    ['origin', `AS${origin}`],
    ...(maxLength === undefined ? [] : [['max-length', String(maxLength)] as const]),
    ['mnt-by', 'ALPHA-MNT'],
    ['source', 'DN42'],
  ]);

/** What B announces, and the state each route has against the registry below. */
const FROM_B = {
  valid: '172.21.0.0/24',
  wrongOrigin: '172.21.1.0/24',
  tooLong: '172.21.2.0/25',
  uncovered: '172.21.3.0/24',
};

describe('RPKI end to end: registry → replica → control server → real agent → real BIRD → routing views', function () {
  this.timeout(180_000);
  let nsA: NetNs;
  let nsB: NetNs;
  let repo: RegistryRepo;
  let sys: TestSystem;
  let control: { url: string; close(): Promise<void> };
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let birdA: BirdProcess;
  let birdB: BirdProcess;
  let config: string;
  let stateDir: string;
  let enrollmentToken: string;
  let telemetry: Telemetry | undefined;
  const admin = () => api(`${control.url}/control/v1`, { token: ADMIN_TOKEN });
  const birdcA = (...args: string[]) => runCommand(['birdc', '-s', birdA.socket, ...args]).then((r) => r.stdout);

  before(async function () {
    const a = await createNetns();
    const b = await createNetns();
    if ('unavailable' in a || 'unavailable' in b) {
      if (!('unavailable' in a)) await a.remove();
      if (!('unavailable' in b)) await b.remove();
      this.skip();
    }
    [nsA, nsB] = [a as NetNs, b as NetNs];
    expect((await nsA.ip('link', 'add', 'vA', 'type', 'veth', 'peer', 'name', 'vB', 'netns', nsB.name)).code).to.equal(0);
    await nsA.ip('addr', 'add', '10.99.0.1/24', 'dev', 'vA');
    await nsB.ip('addr', 'add', '10.99.0.2/24', 'dev', 'vB');
    await nsA.ip('link', 'set', 'vA', 'up');
    await nsB.ip('link', 'set', 'vB', 'up');

    // The registry: the base objects, our prefixes (AS4242420001) and B's (AS4242420002), one of them with max-length 24.
    repo = writeBaseRegistry(new RegistryRepo())
      .put('route', '172.20.0.0/27', route('route', '172.20.0.0/27', OWN))
      .put('route6', 'fd42:4242:1::/48', route('route6', 'fd42:4242:1::/48', OWN))
      .put('route', FROM_B.valid, route('route', FROM_B.valid, PEER))
      .put('route', FROM_B.wrongOrigin, route('route', FROM_B.wrongOrigin, PEER))
      .put('route', '172.21.2.0/24', route('route', '172.21.2.0/24', PEER, 24));
    repo.commit('routes');
    sys = await createTestSystem({ env: { ADMIN_TOKEN, ...registryEnv(repo.dir, { REGISTRY_SERVICE_TOKEN: REGISTRY_TOKEN }) } });
    await migrate(sys.pool, [registryMigrations]);
    await new RegistrySyncer(sys.context).sync();
    control = await startApp(createControlApp(sys.context, { roaSource: localRoaSource(sys.pool) }));

    expectResponse(
      await admin().post('/admin/nodes', {
        node_id: 'fra1',
        asn: OWN,
        router_id: '172.20.0.1',
        ipv4_prefixes: ['172.20.0.0/27'],
        ipv6_prefixes: ['fd42:4242:1::/48'],
      }),
    ).status(201);
    expectResponse(await admin().post('/admin/nodes/fra1/bgp-sessions', { spec: { name: 'peer_b', remote_asn: PEER, neighbor_address: '10.99.0.2' } })).status(
      201,
    );
    const token = await admin().post('/admin/enrollment-tokens', { node_id: 'fra1' });
    enrollmentToken = token.body.secret;

    dir = await tempDir('dn42-rpki-e2e-');
    stateDir = join(dir.path, 'state');
    await writeFile(join(dir.path, 'a.conf'), 'router id 10.99.0.1;\nprotocol device {}\n');
    birdA = await spawnBird(join(dir.path, 'a.conf'), join(dir.path, 'a.ctl'), [], ['ip', 'netns', 'exec', nsA.name]);
    // B originates its routes, but one arrives with AS4242420003 behind B's own AS in its path: another origin than its ROA names.
    await writeFile(
      join(dir.path, 'b.conf'),
      `router id 10.99.0.2;
protocol device {}
protocol static s4 {
  ipv4 { import filter { if net = ${FROM_B.wrongOrigin} then bgp_path.prepend(${OTHER}); accept; }; };
  ${Object.values(FROM_B)
    .map((p) => `route ${p} blackhole;`)
    .join('\n  ')}
}
protocol bgp peer_a { local 10.99.0.2 as ${PEER}; neighbor 10.99.0.1 as ${OWN}; ipv4 { import none; export all; }; }
`,
    );
    birdB = await spawnBird(join(dir.path, 'b.conf'), join(dir.path, 'b.ctl'), [], ['ip', 'netns', 'exec', nsB.name]);
    config = await writeAgentConfig(join(dir.path, 'agent.conf'), { bird_socket: birdA.socket, bird_kernel: false });
  });
  after(async () => {
    await telemetry?.stop();
    await birdA?.stop();
    await birdB?.stop();
    await control?.close();
    await sys?.close();
    await dir?.remove();
    repo?.destroy();
    await nsA?.remove();
    await nsB?.remove();
  });

  const apply = async () => {
    const run = await runAgent(
      [
        '--once',
        '--mode',
        'apply',
        '--config',
        config,
        '--controller-url',
        control.url,
        '--enrollment-token',
        enrollmentToken,
        '--requested-node-id',
        'fra1',
        '--state-dir',
        stateDir,
      ],
      60_000,
    );
    expect(run.code, run.stderr).to.equal(0);
    return JSON.parse(run.stdout) as { generation: number; status: string; drift: unknown[] };
  };

  /** The agent's telemetry in this process, on the real agent's state dir (its token, held ROA set, applied state) and BIRD A. */
  const reportRoutingTable = async () => {
    await telemetry?.stop();
    const applied: AppliedState = { ...JSON.parse(await readFile(join(stateDir, 'nodes/fra1/applied.json'), 'utf8')), failures: 0 };
    const token = (await readFile(join(stateDir, 'agent-token'), 'utf8')).trim();
    const base = `${control.url}/control/v1`;
    const rt: AgentRuntime = {
      controllerUrl: base,
      nodeId: 'fra1',
      stateDir,
      renderedDir: join(stateDir, 'nodes/fra1/rendered'),
      version: '1.0.1',
      logger: pino({ level: 'silent' }),
      commands: { ...DEFAULT_COMMANDS, birdc: ['birdc', '-s', birdA.socket] },
      request: (method, path, body, headers) => callControl(base, method, path, body, token, headers),
      agentToken: () => token,
      applied: () => applied,
    };
    // Its first round runs at start.
    telemetry = startTelemetry(rt, new LogRing(), ROUTING_ONLY);
  };
  const prefixes = (query = '') => admin().get(`/admin/nodes/fra1/routing/prefixes${query}`);
  const stateOf = (routes: { prefix: string; rpki: string }[]) => Object.fromEntries(routes.map((r) => [r.prefix, r.rpki]));
  /** B's routes in A's table and A's import counters for the session: [received, filtered]. */
  const importOf = async () => {
    const line = (await birdcA('show', 'protocols', 'all', 'ebgp_peer_b')).split('\n').find((l) => /Import updates:/.test(l)) ?? '';
    const n = line.trim().split(/\s+/).slice(2).map(Number);
    return { received: n[0], filtered: n[2] };
  };

  it('reject_invalid (default): the agent loads the ROAs, BIRD drops the two invalid routes on eBGP import, and the report holds every state', async () => {
    const summary = await apply();
    expect(summary).to.deep.include({ generation: 1, status: 'succeeded' });
    const held = JSON.parse(await readFile(join(stateDir, 'nodes/fra1/roas.json'), 'utf8'));
    expect(held.set.roas).to.deep.include({ prefix: '172.21.2.0/24', max_length: 24, asn: PEER });
    expect(await readFile(join(stateDir, 'nodes/fra1/rendered/bird/roa_v4.conf'), 'utf8')).to.include(`route ${FROM_B.wrongOrigin} max 24 as ${PEER};`);
    const v4 = held.set.roas.filter((r: { prefix: string }) => !r.prefix.includes(':')).length;
    expect(await birdcA('show', 'route', 'table', 'dn42_roa_v4', 'count')).to.include(`${v4} of ${v4} routes`);

    // B's four routes arrive; two are filtered by the ROA check
    await eventually(async () => (await importOf()).received === 4 && true, { timeoutMs: 60_000, what: 'the session up with B’s four routes received' });
    expect(await importOf()).to.deep.equal({ received: 4, filtered: 2 });

    await reportRoutingTable();
    const res = await eventually(
      async () => {
        const r = await prefixes();
        return r.status === 200 && r.body.routes.some((x: { prefix: string }) => x.prefix === FROM_B.valid) ? r : null;
      },
      { timeoutMs: 30_000, what: 'a stored routing table with B’s routes' },
    );
    expect(res.body.rpki_observed).to.equal(true);
    const states = stateOf(res.body.routes);
    expect(states).to.include({ [FROM_B.valid]: 'valid', [FROM_B.uncovered]: 'not_found', '172.20.0.0/27': 'valid', 'fd42:4242:1::/48': 'valid' });
    expect(states).not.to.have.any.keys(FROM_B.wrongOrigin, FROM_B.tooLong);
    const count = (s: string) => res.body.routes.filter((r: { rpki: string }) => r.rpki === s).length;
    expect(res.body.rpki_counts).to.deep.equal({ valid: count('valid'), invalid: 0, not_found: count('not_found') });
    expect((await prefixes('?rpki=invalid')).body).to.deep.include({ total: 0, routes: [] });
    // And the stored table is the report's
    const { rows } = await sys.pool.query(`SELECT rpki_observed FROM routing_tables WHERE node_id = 'fra1'`);
    expect(rows[0].rpki_observed).to.equal(true);
    const stored = await sys.pool.query(`SELECT rpki, origin_asn::float8 AS origin_asn FROM routing_routes WHERE node_id = 'fra1' AND prefix = $1`, [
      FROM_B.valid,
    ]);
    expect(stored.rows[0]).to.include({ rpki: 'valid', origin_asn: PEER });
  });

  it('observe: the invalid routes are imported and reported invalid (wrong origin, beyond max-length); /routing/prefixes?rpki=invalid lists them', async () => {
    expectResponse(await admin().patch('/admin/nodes/fra1', { base_template: { bird: { rpki: { mode: 'observe' } } } })).status(200);
    const summary = await apply();
    expect(summary).to.deep.include({ generation: 2, status: 'succeeded' });
    expect(await readFile(join(stateDir, 'nodes/fra1/rendered/bird/filters.conf'), 'utf8')).not.to.include('roa_check');
    const inTable = async (prefix: string) => (await birdcA('show', 'route', 'for', prefix)).includes('ebgp_peer_b');
    await eventually(async () => (await inTable(FROM_B.tooLong)) && inTable(FROM_B.wrongOrigin), {
      timeoutMs: 60_000,
      what: 'the invalid routes imported once the filter no longer drops them',
    });

    await reportRoutingTable();
    const invalid = await eventually(
      async () => {
        const r = await prefixes('?rpki=invalid');
        return r.status === 200 && r.body.total === 2 ? r.body : null;
      },
      { timeoutMs: 30_000, what: 'the two invalid routes in the prefix search' },
    );
    expect(invalid.routes.map((r: { prefix: string; origin_asn: number }) => [r.prefix, r.origin_asn])).to.deep.equal([
      [FROM_B.wrongOrigin, OTHER],
      [FROM_B.tooLong, PEER],
    ]);
    expect(invalid.rpki_counts.invalid).to.equal(2);
    expect(invalid.rpki_counts.valid).to.be.at.least(3);
  });

  it('a changed route object reaches BIRD on the next apply: new ROA set fetched, ROA file rewritten, no drift reported', async () => {
    repo.put('route', FROM_B.uncovered, route('route', FROM_B.uncovered, PEER));
    repo.commit('B registers 172.21.3.0/24');
    await new RegistrySyncer(sys.context).sync();
    const before = JSON.parse(await readFile(join(stateDir, 'nodes/fra1/roas.json'), 'utf8')).etag;
    const summary = await apply();
    expect(summary).to.deep.include({ generation: 2, status: 'succeeded', drift: [] });
    const held = JSON.parse(await readFile(join(stateDir, 'nodes/fra1/roas.json'), 'utf8'));
    expect(held.etag).not.to.equal(before);
    expect(held.set.roas).to.deep.include({ prefix: FROM_B.uncovered, max_length: 24, asn: PEER });
    const v4 = held.set.roas.filter((r: { prefix: string }) => !r.prefix.includes(':')).length;
    await eventually(async () => (await birdcA('show', 'route', 'table', 'dn42_roa_v4', 'count')).includes(`${v4} of ${v4} routes`), {
      timeoutMs: 20_000,
      what: 'the new ROA in BIRD',
    });
    await reportRoutingTable();
    await eventually(async () => stateOf((await prefixes()).body.routes ?? [])[FROM_B.uncovered] === 'valid', {
      timeoutMs: 30_000,
      what: `${FROM_B.uncovered} reported valid`,
    });
  });
});

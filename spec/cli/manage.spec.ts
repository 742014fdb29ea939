import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { LOCAL_SECRETS_FILE } from '../../cli/local-secrets.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { dn42Control, serveUntilUp } from '../support/cli.js';
import { freePort } from '../support/ports.js';
import { eventually } from '../support/wait.js';

const ADMIN = 'manage-spec-admin-token-0123456789';
const IDENTITY_ADMIN = 'manage-spec-identity-token-0123456789';
const PEER_KEY = 'wQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=';

describe('The dn42-control management commands against a real server', function () {
  this.timeout(240_000);

  let db: TestDatabase;
  let dataDir: string;
  let work: string;
  let server: Awaited<ReturnType<typeof serveUntilUp>>;
  let remote: Record<string, string>;
  let control: string;

  before(async () => {
    db = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'dn42-manage-'));
    work = mkdtempSync(join(tmpdir(), 'dn42-manage-work-'));
    const ports = { control: await freePort(), identity: await freePort(), registry: await freePort(), site: await freePort() };
    control = `http://127.0.0.1:${ports.control}`;
    server = await serveUntilUp(
      {
        DATABASE_URL: db.url,
        DATA_DIR: dataDir,
        LOG_FORMAT: 'json',
        // Not loopback: nothing is made up; what is configured is all there is.
        BIND_HOST: '0.0.0.0',
        ADMIN_TOKEN: ADMIN,
        IDENTITY_ADMIN_TOKEN: IDENTITY_ADMIN,
        REGISTRY_SERVICE_TOKEN: 'manage-spec-registry-token-0123456789',
        IDENTITY_KEY_SECRET: 'manage-spec-identity-key-secret-0123',
        REGISTRY_SOURCE: 'examples/registry',
        REGISTRY_SYNC_INTERVAL: '0',
        CONTROL_PORT: String(ports.control),
        IDENTITY_PORT: String(ports.identity),
        REGISTRY_PORT: String(ports.registry),
        SITE_PORT: String(ports.site),
        IDENTITY_ISSUER: `http://127.0.0.1:${ports.identity}`,
      },
      ports,
    );
    // Flags and environment both work; the environment is what most of these use.
    remote = { DN42_CONTROL_URL: control, DN42_IDENTITY_URL: `http://127.0.0.1:${ports.identity}`, DN42_TOKEN: ADMIN, DN42_IDENTITY_TOKEN: IDENTITY_ADMIN };
  });

  after(async () => {
    await server?.stop();
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  const cli = (args: string[], env: Record<string, string> = remote) => dn42Control(args, env);
  const ok = async (args: string[], env?: Record<string, string>) => {
    const run = await cli(args, env);
    expect(run.code, `${args.join(' ')}: ${run.stderr}`).to.equal(0);
    return run.stdout;
  };

  it('on a non-loopback BIND_HOST makes no local secrets and a login without a captcha fails closed, saying why in the log', async () => {
    expect(existsSync(join(dataDir, LOCAL_SECRETS_FILE))).to.equal(false);
    const login = await fetch(`${control}/control/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'nobody', password: 'whatever1' }),
    });
    expect(login.status).to.equal(400);
    expect(((await login.json()) as { detail: string }).detail).to.equal('captcha verification failed');
    await eventually(() => server.output().stdout.includes('CONTROL_LOGIN_CAPTCHA is not set'), {
      what: 'the reason in the log',
      timeoutMs: 10_000,
      everyMs: 50,
    });
  });

  it('registry sync loads the sample registry through the identity service; status shows it, --json as the API answers', async () => {
    const before = JSON.parse(await ok(['registry', 'status', '--json']));
    expect(before).to.include({ enabled: true, commit: null });
    expect(before.detail).to.match(/has never synced/);
    expect(await ok(['registry', 'status'])).to.match(/^commit:\s+\(never synced\)$/m);
    expect(await ok(['registry', 'sync'])).to.match(/^synced: commit [0-9a-f]{40}, 2 aut-num, 1 mntner \(\d+ ms\)\n$/);
    const after = JSON.parse(await ok(['registry', 'status', '--json']));
    expect(after).to.include({ enabled: true, detail: null });
    expect(after.counts).to.include({ 'aut-num': 2, mntner: 1 });
    expect(await ok(['registry', 'sync'])).to.match(/^unchanged: commit /);
  });

  it('nodes create, list, show and decommission, in table and JSON form', async () => {
    const body = {
      node_id: 'ber1',
      asn: 4242423998,
      router_id: '172.23.250.2',
      site: 'ber',
      loopback_ipv4: '172.23.250.2',
      loopback_ipv6: 'fd42:de30:1234::2',
      link_local: 'fe80::1',
      ipv4_prefixes: ['172.23.250.0/27'],
      ipv6_prefixes: ['fd42:de30:1234::/48'],
    };
    const file = join(work, 'ber1.json');
    writeFileSync(file, JSON.stringify(body));
    expect(await ok(['nodes', 'create', '--file', file])).to.equal('node ber1 created\n');
    const made = JSON.parse(await ok(['nodes', 'create', 'fra1', '--file', file, '--router-id', '172.23.250.1', '--site', 'fra', '--json']));
    expect(made).to.include({ node_id: 'fra1', router_id: '172.23.250.1', site: 'fra', asn: 4242423998 });

    const table = (await ok(['nodes', 'list'])).trimEnd().split('\n');
    expect(table[0]).to.match(/^node_id\s+asn\s+site\s+router_id\s+lifecycle\s+current_generation$/);
    expect(table.slice(1).map((l) => l.split(/\s+/).slice(0, 5))).to.deep.equal([
      ['ber1', '4242423998', 'ber', '172.23.250.2', 'active'],
      ['fra1', '4242423998', 'fra', '172.23.250.1', 'active'],
    ]);
    const listed = JSON.parse(await ok(['nodes', 'list', '--json']));
    expect(listed.map((n: { node_id: string }) => n.node_id)).to.deep.equal(['ber1', 'fra1']);
    expect(await ok(['nodes', 'show', 'fra1'])).to.match(/^router_id:\s+172\.23\.250\.1$/m);

    const duplicate = await cli(['nodes', 'create', '--file', file]);
    expect(duplicate.code).to.equal(1);
    expect(duplicate.stderr).to.match(/^dn42-control: 409 .*ber1/);
    expect(duplicate.stdout).to.equal('');

    expect(await ok(['nodes', 'decommission', 'ber1'])).to.match(/^node ber1 decommissioned \(generation \d+\)\n$/);
    expect(JSON.parse(await ok(['nodes', 'show', 'ber1', '--json'])).lifecycle).to.equal('decommissioned');
  });

  it('peerings provision from flags and from a JSON file, list them, and desired-state get prints what dn42-agent reads', async () => {
    expect(
      await ok([
        'peerings',
        'provision',
        'fra1',
        '--name',
        'demo',
        '--remote-asn',
        '4242423999',
        '--listen-port',
        '51820',
        '--peer-public-key',
        PEER_KEY,
        '--peer-link-local',
        'fe80::2',
      ]),
    ).to.match(/^peering demo \(id \d+\) provisioned on fra1: generation 1\n$/);
    const file = join(work, 'peering.json');
    writeFileSync(
      file,
      JSON.stringify({
        peering: { name: 'second', remote_asn: 4242423999 },
        interface_spec: { name: 'dn42_second', kind: 'wireguard', listen_port: 51821, peer: { public_key: PEER_KEY }, peer_link_local: 'fe80::3' },
        bgp_spec: { name: 'second_v6', remote_asn: 4242423999, neighbor_address: 'fe80::3', interface: 'dn42_second' },
      }),
    );
    expect(JSON.parse(await ok(['peerings', 'provision', 'fra1', '--file', file, '--json'])).generation).to.equal(2);
    const rows = (await ok(['peerings', 'list', 'fra1'])).trimEnd().split('\n');
    expect(rows.slice(1).map((l) => l.split(/\s+/).slice(1, 4))).to.deep.equal([
      ['demo', '4242423999', 'DEMO-AS'],
      ['second', '4242423999', 'DEMO-AS'],
    ]);

    const missing = await cli(['peerings', 'provision', 'fra1', '--name', 'x']);
    expect(missing.code).to.not.equal(0);
    expect(missing.stderr).to.include('--remote-asn');

    const desired = JSON.parse(await ok(['desired-state', 'get', 'fra1']));
    expect(desired).to.include({ node_id: 'fra1', generation: 2 });
    expect(desired.state.interfaces.map((i: { name: string }) => i.name)).to.include.members(['dn42_demo', 'dn42_second']);
    const none = await cli(['desired-state', 'get', 'nope']);
    expect(none.code).to.equal(1);
    expect(none.stderr).to.equal('dn42-control: 404 unknown node nope\n');
  });

  it('enrollment-tokens create shows the secret once, bound to the node', async () => {
    const out = await ok(['enrollment-tokens', 'create', '--node', 'fra1', '--description', 'fra1 first start']);
    expect(out).to.match(/^enrollment token enr_\w+ created for fra1; it is shown this once:\n[A-Za-z0-9_-]{20,}\n$/);
    const json = JSON.parse(await ok(['enrollment-tokens', 'create', '--json']));
    expect(json).to.include({ node_id: null, used_at: null });
    expect(json.secret).to.be.a('string');
  });

  it('oauth-clients add, list and remove with the identity administration token', async () => {
    const added = JSON.parse(
      await ok([
        'oauth-clients',
        'add',
        '--name',
        'Public App',
        '--redirect-uri',
        'http://127.0.0.1:9999/a',
        '--redirect-uri',
        'http://127.0.0.1:9999/b',
        '--json',
      ]),
    );
    expect(added).to.include({ name: 'Public App', confidential: false });
    expect(added).to.not.have.property('client_secret');
    expect(JSON.parse(await ok(['oauth-clients', 'list', '--json'])).clients.map((c: { client_id: string }) => c.client_id)).to.include(added.client_id);
    expect(await ok(['oauth-clients', 'list'])).to.include('http://127.0.0.1:9999/a,http://127.0.0.1:9999/b');
    expect(await ok(['oauth-clients', 'remove', added.client_id])).to.equal(`client ${added.client_id} removed\n`);
    expect(JSON.parse(await ok(['oauth-clients', 'list', '--json'])).clients.map((c: { client_id: string }) => c.client_id)).to.not.include(added.client_id);
  });

  it('takes the server and token from flags too; a wrong token, a missing token and an unreachable server exit 1 with one clear line', async () => {
    const viaFlags = await ok(['nodes', 'list', '--json', '--server', control, '--token', ADMIN], {});
    expect(JSON.parse(viaFlags).length).to.equal(2);
    const wrong = await cli(['nodes', 'list', '--token', 'wrong-token-wrong-token']);
    expect([wrong.code, wrong.stderr]).to.deep.equal([1, 'dn42-control: 401 invalid or expired token\n']);
    const none = await cli(['nodes', 'list'], { DN42_CONTROL_URL: control });
    expect([none.code, none.stderr]).to.deep.equal([1, 'dn42-control: no token: pass --token or set DN42_TOKEN\n']);
    const port = await freePort();
    const down = await cli(['nodes', 'list', '--server', `http://127.0.0.1:${port}`]);
    expect([down.code, down.stderr]).to.deep.equal([1, `dn42-control: cannot reach http://127.0.0.1:${port}: ECONNREFUSED\n`]);
  });

  it('logs each successful write at info, reads at debug', async () => {
    const lines = server
      .output()
      .stdout.split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: number; req?: { method: string; url: string }; res?: { statusCode: number } });
    const access = lines.filter((l) => l.req && l.res);
    expect(access.some((l) => l.req!.method === 'POST' && l.req!.url === '/control/v1/admin/nodes' && l.res!.statusCode === 201 && l.level === 30)).to.equal(
      true,
    );
    expect(access.some((l) => l.req!.method === 'GET' && l.res!.statusCode === 200)).to.equal(false);
    // The secrets never reach the log.
    expect(server.output().stdout).to.not.include(ADMIN);
  });
});

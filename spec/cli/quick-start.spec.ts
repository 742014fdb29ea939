import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import { expect } from 'chai';
import * as oidc from 'openid-client';
import { encodeTicket } from '../../infra/captcha/index.js';
import { buildReference } from '../../web/build.js';
import { LOCAL_SECRETS_FILE } from '../../cli/local-secrets.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { dn42Control, ROOT, serveUntilUp, startScript } from '../support/cli.js';
import { freePort } from '../support/ports.js';
import { eventually } from '../support/wait.js';

/**
 * The README quick start, step by step, on a fresh data directory: the real
 * `dn42-control serve` with nothing configured but ports and the database,
 * then each step of the walk reaching its result.
 */
const DEMO_KEY = join(ROOT, 'examples/registry/demo-keys/DEMO-MNT_ed25519');
const DEMO_ASN = 4242423999;

/** The README's authorization URL (its client_id left as `<client_id>`) and the PKCE verifier it names: the walk below uses them as written. */
function readmeAuthorization(): { url: string; verifier: string; redirectUri: string } {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const url = /`(http:\/\/127\.0\.0\.1:8081\/authorize\?[^`]+)`/.exec(readme)?.[1];
  const verifier = /PKCE\s+verifier is `([^`]+)`/.exec(readme)?.[1];
  if (!url || !verifier) throw new Error('the README quick start lost its authorization URL or PKCE verifier');
  return { url, verifier, redirectUri: new URL(url).searchParams.get('redirect_uri')! };
}

async function json(res: Response): Promise<{ status: number; body: any }> {
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** A solved ALTCHA proof of work, as the login form's widget makes one. */
async function solvedTicket(challengeUrl: string): Promise<string> {
  const challenge = await json(await fetch(challengeUrl));
  expect(challenge.status, JSON.stringify(challenge.body)).to.equal(200);
  const solution = await solveChallenge({ challenge: challenge.body, deriveKey });
  if (!solution) throw new Error('proof of work not solved');
  return encodeTicket(challenge.body, solution);
}

describe('The README quick start on a fresh data directory', function () {
  this.timeout(240_000);

  let db: TestDatabase;
  let dataDir: string;
  let work: string;
  let ports: { control: number; identity: number; registry: number; site: number };
  let env: Record<string, string>;
  let server: Awaited<ReturnType<typeof serveUntilUp>>;
  let token: string;
  let control: string;
  let identity: string;
  /** The demo maintainer's session, from the sign-in through the page API. */
  let demoSession: string;

  before(async () => {
    // `npm start` builds the reference page first (prestart); so does this walk.
    await buildReference();
    db = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'dn42-quick-start-'));
    work = mkdtempSync(join(tmpdir(), 'dn42-quick-start-work-'));
    ports = { control: await freePort(), identity: await freePort(), registry: await freePort(), site: await freePort() };
    control = `http://127.0.0.1:${ports.control}`;
    identity = `http://127.0.0.1:${ports.identity}`;
    env = {
      DATABASE_URL: db.url,
      DATA_DIR: dataDir,
      LOG_FORMAT: 'json',
      CONTROL_PORT: String(ports.control),
      IDENTITY_PORT: String(ports.identity),
      REGISTRY_PORT: String(ports.registry),
      SITE_PORT: String(ports.site),
      IDENTITY_ISSUER: identity,
    };
    server = await serveUntilUp(env, ports);
    await eventually(() => /admin token: \S+/.test(server.output().stdout), { what: 'the admin token to be printed', timeoutMs: 10_000, everyMs: 50 });
    token = /admin token: (\S+)/.exec(server.output().stdout)![1];
  });

  after(async () => {
    await server?.stop();
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  const cli = (args: string[], input?: string) => dn42Control(args, { DN42_TOKEN: token, DN42_CONTROL_URL: control, DN42_IDENTITY_URL: identity }, { input });

  it('prints an admin token once, with how to send it, and keeps it with the captcha secret in DATA_DIR (0600)', () => {
    const out = server.output().stdout;
    expect(out).to.include(`Authorization: Bearer ${token}`);
    const file = join(dataDir, LOCAL_SECRETS_FILE);
    expect(statSync(file).mode & 0o777).to.equal(0o600);
    const stored = JSON.parse(readFileSync(file, 'utf8'));
    expect(stored.admin_token).to.equal(token);
    expect(stored.captcha_secret).to.be.a('string').with.length.greaterThan(15);
  });

  it('answers an admin call with the printed token', async () => {
    const res = await json(await fetch(`${control}/control/v1/admin/nodes`, { headers: { authorization: `Bearer ${token}` } }));
    expect(res).to.deep.equal({ status: 200, body: [] });
  });

  it('serves each API reference page beside its OpenAPI document', async () => {
    for (const [base, prefix] of [
      [control, '/control/v1'],
      [identity, '/api/v1'],
      [`http://127.0.0.1:${ports.registry}`, '/registry/v1'],
    ]) {
      const page = await fetch(`${base}${prefix}/docs`);
      expect(page.status, `${prefix}/docs`).to.equal(200);
      expect(await page.text()).to.match(/src="docs\/reference-[A-Z0-9]+\.js"/);
      expect((await fetch(`${base}${prefix}/openapi.json`)).status).to.equal(200);
    }
  });

  it('logs an operator account in with a solved proof of work, and the session token works as admin', async () => {
    const created = await dn42Control(['accounts', 'create', 'alice'], env, { input: 'correct horse battery\n' });
    expect(created.code, created.stderr).to.equal(0);
    expect(created.stdout).to.equal('account alice created\n');
    const ticket = await solvedTicket(`${control}/control/v1/auth/captcha`);
    const login = await json(
      await fetch(`${control}/control/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'alice', password: 'correct horse battery', captcha_token: ticket }),
      }),
    );
    expect(login.status, JSON.stringify(login.body)).to.equal(200);
    const nodes = await fetch(`${control}/control/v1/admin/nodes`, { headers: { authorization: `Bearer ${login.body.token}` } });
    expect(nodes.status).to.equal(200);
  });

  it('creates a node and a peering, reads the desired state, and dn42-agent renders a BIRD config that bird -p accepts', async () => {
    const node = await cli([
      'nodes',
      'create',
      'fra1',
      '--asn',
      '4242423998',
      '--router-id',
      '172.23.250.1',
      '--site',
      'fra',
      '--loopback-ipv4',
      '172.23.250.1',
      '--loopback-ipv6',
      'fd42:de30:1234::1',
      '--link-local',
      'fe80::1',
      '--ipv4-prefix',
      '172.23.250.0/27',
      '--ipv6-prefix',
      'fd42:de30:1234::/48',
    ]);
    expect(node.code, node.stderr).to.equal(0);
    expect(node.stdout).to.equal('node fra1 created\n');
    const peering = await cli([
      'peerings',
      'provision',
      'fra1',
      '--name',
      'demo',
      '--remote-asn',
      String(DEMO_ASN),
      '--listen-port',
      '51820',
      '--peer-public-key',
      'wQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=',
      '--peer-endpoint',
      'peer.example.net:51820',
      '--peer-link-local',
      'fe80::2',
    ]);
    expect(peering.code, peering.stderr).to.equal(0);
    expect(peering.stdout).to.match(/^peering demo \(id \d+\) provisioned on fra1: generation 1\n$/);

    const desired = await cli(['desired-state', 'get', 'fra1']);
    expect(desired.code, desired.stderr).to.equal(0);
    const file = join(work, 'desired.json');
    writeFileSync(file, desired.stdout);
    expect(JSON.parse(desired.stdout)).to.include({ node_id: 'fra1', generation: 1 });

    const stateDir = join(work, 'agent');
    const plan = await startScript('agent/bin.mjs', ['--plan-only', '--desired-state', file, '--state-dir', stateDir], {}).done;
    expect(plan.code, plan.stderr).to.equal(0);
    const summary = JSON.parse(plan.stdout);
    expect(summary).to.include({ node_id: 'fra1', status: 'planned', generation: 1 });
    expect(summary.changes.added).to.include('bird/bird.conf');
    expect(existsSync(join(stateDir, 'nodes/fra1/rendered/bird/bird.conf')), 'plan-only writes nothing').to.equal(false);

    const written = await startScript('agent/bin.mjs', ['--once', '--mode', 'write-rendered', '--desired-state', file, '--state-dir', stateDir], {}).done;
    expect(written.code, written.stderr).to.equal(0);
    const birdConf = join(stateDir, 'nodes/fra1/rendered/bird/bird.conf');
    expect(readFileSync(birdConf, 'utf8')).to.include('router id 172.23.250.1;');
    // bird -p parses the whole configuration (includes too) and exits non-zero on any error.
    execFileSync('bird', ['-p', '-c', birdConf], { stdio: 'pipe' });
  });

  it('signs in through the authorization page API against the sample registry with the demo SSH key', async () => {
    await eventually(async () => (await json(await fetch(`${identity}/api/v1/registry/status`))).body?.commit !== null, {
      what: 'the sample registry to be loaded',
      timeoutMs: 30_000,
      everyMs: 200,
    });
    const status = await cli(['registry', 'status', '--json']);
    expect(JSON.parse(status.stdout)).to.deep.include({ enabled: true, detail: null });

    const options = await json(
      await fetch(`${identity}/api/v1/verification-options`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ asn: DEMO_ASN, captcha_token: await solvedTicket(`${identity}/api/v1/captcha/challenge`) }),
      }),
    );
    expect(options.status, JSON.stringify(options.body)).to.equal(200);
    const ssh = (options.body.options as { id: string; kind: string; mntner: string }[]).find((o) => o.kind === 'ssh');
    expect(ssh, JSON.stringify(options.body)).to.include({ mntner: 'DEMO-MNT' });

    const challenge = await json(
      await fetch(`${identity}/api/v1/challenge`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ asn: DEMO_ASN, option_id: ssh!.id }),
      }),
    );
    expect(challenge.status, JSON.stringify(challenge.body)).to.equal(201);
    // As the README says: ssh-keygen refuses a private key others can read, so the demo key is copied to a 0600 file.
    const key = join(work, 'demo-key');
    copyFileSync(DEMO_KEY, key);
    execFileSync('chmod', ['600', key]);
    const signature = execFileSync('ssh-keygen', ['-Y', 'sign', '-f', key, '-n', 'dn42-autopeer'], {
      input: challenge.body.nonce,
      stdio: ['pipe', 'pipe', 'ignore'],
    }).toString('utf8');
    const submit = await json(
      await fetch(`${identity}/api/v1/challenge/submit`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ challenge_id: challenge.body.challenge_id, answer: signature }),
      }),
    );
    expect(submit.status, JSON.stringify(submit.body)).to.equal(200);
    const session = await json(await fetch(`${identity}/api/v1/session`, { headers: { authorization: `Bearer ${submit.body.token}` } }));
    expect(session.status, JSON.stringify(session.body)).to.equal(200);
    expect(JSON.stringify(session.body)).to.include(String(DEMO_ASN));
    demoSession = submit.body.token;
  });

  it('registers an OAuth application with the same token and lists it', async () => {
    const added = await cli([
      'oauth-clients',
      'add',
      '--name',
      'Looking Glass',
      '--redirect-uri',
      'http://127.0.0.1:9999/callback',
      '--confidential',
      '--json',
    ]);
    expect(added.code, added.stderr).to.equal(0);
    const client = JSON.parse(added.stdout);
    expect(client).to.include({ name: 'Looking Glass', confidential: true });
    expect(client.client_secret).to.be.a('string');
    const listed = await cli(['oauth-clients', 'list']);
    expect(listed.stdout).to.match(new RegExp(`^${client.client_id}\\s+Looking Glass\\s+true\\s+http://127.0.0.1:9999/callback$`, 'm'));
  });

  it("finishes the OAuth walk: the README's public application, its authorization URL approved through the page API, the code exchanged by openid-client with PKCE, the ID token and UserInfo name the demo AS", async () => {
    const readme = readmeAuthorization();
    const added = await cli(['oauth-clients', 'add', '--name', 'Demo app', '--redirect-uri', readme.redirectUri, '--json']);
    expect(added.code, added.stderr).to.equal(0);
    const app = JSON.parse(added.stdout) as { client_id: string; client_secret?: string; confidential: boolean };
    expect(app.confidential).to.equal(false);

    // The relying party's view of the identity service, by discovery (openid-client wants https unless told).
    const config = await oidc.discovery(new URL(identity), app.client_id, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    expect(config.serverMetadata().issuer).to.equal(identity);

    // What the page does with the README's URL: authorize-context checks the request, approve issues the code for the session.
    const url = new URL(readme.url.replace('<client_id>', encodeURIComponent(app.client_id)));
    const context = await json(await fetch(`${identity}/api/v1/oauth/authorize-context${url.search}`));
    expect(context.status, JSON.stringify(context.body)).to.equal(200);
    expect(context.body.params, JSON.stringify(context.body)).to.be.an('object');
    const approve = await json(
      await fetch(`${identity}/api/v1/oauth/approve`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${demoSession}` },
        body: JSON.stringify({ ...context.body.params, deny: false }),
      }),
    );
    expect(approve.status, JSON.stringify(approve.body)).to.equal(200);
    const callback = new URL(approve.body.redirect_to);
    expect(`${callback.origin}${callback.pathname}`).to.equal(readme.redirectUri);
    expect(callback.searchParams.get('code')).to.be.a('string');

    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: readme.verifier, idTokenExpected: true });
    expect(tokens.token_type.toLowerCase()).to.equal('bearer');
    const claims = tokens.claims()!;
    expect(claims).to.include({ iss: identity, aud: app.client_id, preferred_username: `AS${DEMO_ASN}`, auth_method: 'ssh' });
    expect(claims.mnt_by).to.deep.equal(['DEMO-MNT']);
    expect(claims.dn42).to.deep.include({ asn: DEMO_ASN, active_mnt: 'DEMO-MNT' });

    const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
    expect(info).to.deep.include({ sub: claims.sub, preferred_username: `AS${DEMO_ASN}` });
    expect(info.dn42).to.deep.include({ asn: DEMO_ASN, active_mnt: 'DEMO-MNT', route: ['172.23.250.0/27'], route6: ['fd42:de30:1234::/48'] });

    // The code is spent: a second exchange is refused.
    const again = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: readme.verifier }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(again).to.be.instanceOf(oidc.ResponseBodyError);
    expect((again as oidc.ResponseBodyError).error).to.equal('invalid_grant');
  });

  it('serves a working portal login with no portal setting: the portal registered itself at the identity service', async () => {
    const start = await json(await fetch(`${control}/control/v1/autopeering/auth/login-url?next=/requests`));
    expect(start.status, JSON.stringify(start.body)).to.equal(200);
    const authorize = new URL(start.body.authorize_url);
    expect(`${authorize.origin}${authorize.pathname}`).to.equal(`${identity}/authorize`);
    const context = await json(await fetch(`${identity}/api/v1/oauth/authorize-context${authorize.search}`));
    expect(context.status, JSON.stringify(context.body)).to.equal(200);
    expect(context.body.client).to.deep.equal({ name: 'Autopeering portal' });
    const approve = await json(
      await fetch(`${identity}/api/v1/oauth/approve`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${demoSession}` },
        body: JSON.stringify({ ...context.body.params, deny: false }),
      }),
    );
    expect(approve.status, JSON.stringify(approve.body)).to.equal(200);
    // The redirect URI names CONTROL_URL (its default port 8080); this walk's control server listens elsewhere.
    const redirect = new URL(approve.body.redirect_to);
    expect(redirect.pathname).to.equal('/control/v1/autopeering/auth/callback');
    const callback = await fetch(`${control}${redirect.pathname}${redirect.search}`, { redirect: 'manual' });
    expect(callback.status).to.equal(302);
    const complete = new URL(callback.headers.get('location')!);
    expect(complete.pathname).to.equal('/portal/auth/complete');
    expect(complete.searchParams.get('next')).to.equal('/requests');
    const exchanged = await json(
      await fetch(`${control}/control/v1/autopeering/auth/exchange`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ handoff: complete.searchParams.get('handoff') }),
      }),
    );
    expect(exchanged.status, JSON.stringify(exchanged.body)).to.equal(200);
    const me = await json(await fetch(`${control}/control/v1/autopeering/me`, { headers: { authorization: `Bearer ${exchanged.body.session_token}` } }));
    expect(me.status, JSON.stringify(me.body)).to.equal(200);
    expect(me.body.profile).to.deep.include({ asn: DEMO_ASN, mntner: 'DEMO-MNT', route: ['172.23.250.0/27'], route6: ['fd42:de30:1234::/48'] });
  });

  it('stops on Ctrl-C with exit code 0, without an error or a stack trace in its output', async () => {
    const run = await server.stop('SIGINT');
    expect(run.code, run.stderr).to.equal(0);
    const lines = run.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: number; msg: string; time: string });
    expect(
      lines.filter((l) => l.level >= 50).map((l) => l.msg),
      'no error in the whole run',
    ).to.deep.equal([]);
    const shutdown = lines.findIndex((l) => l.msg === 'shutting down');
    expect(shutdown).to.be.greaterThan(0);
    expect(
      lines
        .slice(shutdown)
        .filter((l) => l.level >= 40)
        .map((l) => l.msg),
      'no warning while stopping',
    ).to.deep.equal([]);
    expect(lines.at(-1)!.msg).to.equal('stopped');
    expect(lines[0].time, 'ISO timestamps').to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(run.stdout + run.stderr).to.not.match(/\n\s+at /);
  });
});

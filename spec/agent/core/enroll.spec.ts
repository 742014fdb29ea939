import { expect } from 'chai';
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { compactDecrypt, decodeProtectedHeader } from 'jose';
import { nodeStream } from '../../../domain/node/events.js';
import { sha256Hex } from '../../../domain/sha256.js';
import { callControl } from '../../../agent/http.js';
import { generateWireguardPrivateKey, wireguardPublicKey } from '../../../agent/render/index.js';
import { writeEnrollment } from '../../../agent/state/enrollment.js';
import { stateLayout } from '../../../agent/state/layout.js';
import { ADMIN_TOKEN, startControl, type ControlInstance } from '../../support/agent-socket.js';
import { issueAgentToken } from '../../support/agents.js';
import { expectResponse } from '../../support/http.js';
import { freePort } from '../../support/ports.js';
import { runAgent, spawnAgent, tempDir } from '../support/core.js';
import { eventually } from '../../support/wait.js';

const nodeBody = { node_id: 'fra1', asn: 4242420001, router_id: '172.20.0.1' };

/** Enrollment and key registration through the real program (`--once --mode write-rendered`: no BIRD needed) against a real control server. */
describe('agent: enrollment and the WireGuard key', function () {
  this.timeout(90_000);
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let stateDir: string;
  beforeEach(async () => {
    dir = await tempDir();
    stateDir = join(dir.path, 'state');
  });
  afterEach(() => dir.remove());

  async function provisioned(c: ControlInstance): Promise<string> {
    expectResponse(await c.admin.post('/admin/nodes', nodeBody)).status(201);
    expectResponse(
      await c.admin.post('/admin/nodes/fra1/bgp-sessions', { spec: { name: 'peer_a', remote_asn: 4242420002, neighbor_address: '172.20.53.1' } }),
    ).status(201);
    return (await c.admin.post('/admin/enrollment-tokens', { node_id: 'fra1' })).body.secret;
  }
  const once = (c: ControlInstance, token: string, node = 'fra1', extra: string[] = []) =>
    runAgent([
      '--once',
      '--mode',
      'write-rendered',
      '--controller-url',
      c.url,
      '--enrollment-token',
      token,
      '--requested-node-id',
      node,
      '--state-dir',
      stateDir,
      ...extra,
    ]);

  for (const [kind, pair] of [
    ['RSA', () => generateKeyPairSync('rsa', { modulusLength: 2048 })],
    ['X25519', () => generateKeyPairSync('x25519')],
  ] as const) {
    it(`escrows the private key to a ${kind} recovery key: only the recovery private key opens it`, async () => {
      const { publicKey, privateKey } = pair() as { publicKey: KeyObject; privateKey: KeyObject };
      const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
      const c = await startControl(undefined, { RECOVERY_PUBLIC_KEY: pem });
      try {
        const run = await once(c, await provisioned(c));
        expect(run.code, run.stderr).to.equal(0);
        const [registered] = (await c.sys.store.readStream(nodeStream('fra1'))).filter((e) => e.type === 'WireguardKeyRegistered');
        const escrow = (registered.data as { private_key_escrow: string }).private_key_escrow;
        const header = decodeProtectedHeader(escrow);
        expect(header).to.deep.include({ enc: 'A256GCM', kid: sha256Hex(createPublicKey(pem).export({ type: 'spki', format: 'der' })) });
        expect(header.alg).to.equal(kind === 'RSA' ? 'RSA-OAEP-256' : 'ECDH-ES+A256KW');
        const opened = new TextDecoder().decode((await compactDecrypt(escrow, privateKey)).plaintext);
        expect(opened).to.equal((await readFile(join(stateDir, 'nodes/fra1/wireguard-private.key'), 'utf8')).trim());
      } finally {
        await c.close();
      }
    });
  }

  it('stores token and node id 0600, registers no escrow without a recovery key, and reuses the enrollment next time', async () => {
    const c = await startControl();
    try {
      const token = await provisioned(c);
      expect((await once(c, token, 'fra1', ['--hostname', 'router1.fra.example.net'])).code).to.equal(0);
      // The registration's inventory lands on the node: --hostname over the detected name, the tools found here.
      const inventory = (await c.admin.get('/admin/nodes/fra1')).body.inventory;
      expect(inventory).to.deep.include({ hostname: 'router1.fra.example.net', arch: process.arch === 'x64' ? 'x86_64' : inventory.arch });
      expect(inventory.os).to.match(/^[a-z]+-\S+$/);
      expect(inventory.has_systemd).to.be.a('boolean');
      expect(inventory.capabilities).to.include.members(['bird', 'wireguard', 'dns']);
      for (const file of ['agent-token', 'agent.json']) expect((await stat(join(stateDir, file))).mode & 0o777).to.equal(0o600);
      expect(JSON.parse(await readFile(join(stateDir, 'agent.json'), 'utf8')).node_id).to.equal('fra1');
      const [registered] = (await c.sys.store.readStream(nodeStream('fra1'))).filter((e) => e.type === 'WireguardKeyRegistered');
      expect((registered.data as { private_key_escrow: string | null }).private_key_escrow).to.equal(null);
      // The one-time token is spent; the stored agent token carries the next run, the node id inferred from the state dir.
      const again = await runAgent(['--once', '--mode', 'write-rendered', '--controller-url', c.url, '--state-dir', stateDir]);
      expect(again.code, again.stderr).to.equal(0);
      expect(JSON.parse(again.stdout)).to.deep.include({ node_id: 'fra1', generation: 1, status: 'written' });
    } finally {
      await c.close();
    }
  });

  it('fails for good on a refused enrollment token: --once exits 1 with the reason, the daemon exits 1 with one line', async () => {
    const c = await startControl();
    try {
      await provisioned(c);
      const run = await once(c, 'not-a-valid-enrollment-token');
      expect(run.code).to.equal(1);
      expect(JSON.parse(run.stdout)).to.deep.include({ status: 'failed', error: 'registration refused: 401 invalid enrollment token' });
      expect(existsSync(join(stateDir, 'agent-token'))).to.equal(false);

      const daemon = spawnAgent([
        '--controller-url',
        c.url,
        '--enrollment-token',
        'not-a-valid-enrollment-token',
        '--requested-node-id',
        'fra1',
        '--state-dir',
        stateDir,
      ]);
      expect(await daemon.exit()).to.equal(1);
      expect(
        daemon
          .stderr()
          .split('\n')
          .filter((l) => l.startsWith('dn42-agent:')),
      ).to.deep.equal(['dn42-agent: registration refused: 401 invalid enrollment token']);
    } finally {
      await c.close();
    }
  });

  it('--once asks once: pending approval is reported (exit 1, status pending_approval), the token stays unspent for the next run', async () => {
    const c = await startControl();
    try {
      expectResponse(await c.admin.post('/admin/nodes', nodeBody)).status(201); // provisioned, but no generation yet
      const token = (await c.admin.post('/admin/enrollment-tokens', { node_id: 'fra1' })).body.secret;
      const started = Date.now();
      const run = await once(c, token);
      expect(run.code).to.equal(1);
      expect(Date.now() - started, 'no backoff wait').to.be.below(15_000);
      expect(JSON.parse(run.stdout)).to.deep.include({
        node_id: 'fra1',
        status: 'pending_approval',
        generation: null,
        error: 'node fra1 has no published desired state yet; retry later',
      });
      expect(existsSync(join(stateDir, 'agent-token'))).to.equal(false);

      // The daemon waits instead (backoff), and a SIGTERM during that wait ends it cleanly.
      const daemon = spawnAgent(['--controller-url', c.url, '--enrollment-token', token, '--requested-node-id', 'fra1', '--state-dir', stateDir]);
      await eventually(() => daemon.logs().some((l) => /^registration pending: /.test(l.msg)), 20_000, 'a pending registration');
      expect(await daemon.stop('SIGTERM')).to.equal(0);

      expectResponse(
        await c.admin.post('/admin/nodes/fra1/bgp-sessions', { spec: { name: 'peer_a', remote_asn: 4242420002, neighbor_address: '172.20.53.1' } }),
      ).status(201);
      const accepted = await once(c, token);
      expect(accepted.code, accepted.stderr).to.equal(0);
      expect(JSON.parse(accepted.stdout)).to.deep.include({ generation: 1, status: 'written' });
    } finally {
      await c.close();
    }
  });

  it('--once fails at once (exit 1) when the control server cannot be reached for the registration', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const run = await runAgent(['--once', '--controller-url', closed, '--enrollment-token', 'x', '--requested-node-id', 'fra1', '--state-dir', stateDir]);
    expect(run.code).to.equal(1);
    const summary = JSON.parse(run.stdout);
    expect(summary.status).to.equal('failed');
    expect(summary.error).to.match(/^registration failed: control server unreachable: .*ECONNREFUSED/);
  });

  it('--once with a token issued before any generation: no desired state (404) is no failure, exit 0', async () => {
    const c = await startControl();
    try {
      expectResponse(await c.admin.post('/admin/nodes', nodeBody)).status(201);
      const { token } = await issueAgentToken(c.url, ADMIN_TOKEN, 'fra1');
      await writeEnrollment(stateLayout(stateDir), { node_id: 'fra1', agent_id: null, token });
      const run = await runAgent(['--once', '--controller-url', c.url, '--state-dir', stateDir]);
      expect(run.code, run.stderr).to.equal(0);
      expect(JSON.parse(run.stdout)).to.deep.include({ node_id: 'fra1', generation: null, status: 'no_desired_state', error: null, steps: [] });
      expect(existsSync(join(stateDir, 'nodes/fra1/rendered')), 'nothing rendered').to.equal(false);
    } finally {
      await c.close();
    }
  });

  it('goes on with its own key when the server holds another one for the node (409 logged as an error)', async () => {
    const c = await startControl();
    try {
      const token = await provisioned(c);
      const other = await issueAgentToken(c.url, ADMIN_TOKEN, 'fra1');
      const elsewhere = wireguardPublicKey(generateWireguardPrivateKey());
      const stored = await callControl(`${c.url}/control/v1`, 'POST', '/agent/wireguard-keys', { node_id: 'fra1', public_key: elsewhere }, other.token);
      expect(stored.status).to.equal(200);
      const run = await once(c, token);
      expect(run.code, run.stderr).to.equal(0);
      expect(JSON.parse(run.stdout)).to.deep.include({ generation: 1, status: 'written' });
      const rejected = run.stderr.split('\n').filter((l) => l.includes('wireguard key rejected by the control server'));
      expect(rejected).to.have.length(1);
      expect(JSON.parse(rejected[0]).level).to.equal(50);
      expect((await c.admin.get('/admin/nodes/fra1')).body.wireguard_public_key).to.equal(elsewhere);
    } finally {
      await c.close();
    }
  });

  it('refuses a state dir enrolled as another node', async () => {
    const c = await startControl();
    try {
      expect((await once(c, await provisioned(c))).code).to.equal(0);
      const run = await once(c, 'irrelevant', 'ams1');
      expect(run.code).to.equal(1);
      expect(JSON.parse(run.stdout).error).to.equal('state dir is enrolled as node fra1, not ams1');
    } finally {
      await c.close();
    }
  });
});

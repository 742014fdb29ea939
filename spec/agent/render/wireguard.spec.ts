import { writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import {
  interfacePlan,
  presharedKeyPath,
  presharedKeyRefs,
  readPresharedKeys,
  renderAll,
  RenderError,
  type RenderedFile,
} from '../../../agent/render/index.js';
import { wireguardConfig } from '../../../agent/render/wireguard.js';
import { dns, sessions, standalone } from './cases.js';
import { MESH, meshState } from './mesh.js';
import { expectWgParses, inTempDir, PRIVATE_KEYS, PSK, renderedInTempDir, run } from './support.js';

const render = (state = sessions()) => renderAll({ state, wireguardPrivateKey: PRIVATE_KEYS.fra1, renderedDir: '/r', presharedKeys: { as44: PSK } });
const file = (files: RenderedFile[], path: string) => files.find((f) => f.path === path) ?? expect.fail(`no ${path}`);

describe('agent render: WireGuard', () => {
  it('writes one wg setconf file per interface, mode 0600, with the node key, port and peer', () => {
    const files = render().filter((f) => f.path.startsWith('wireguard/'));
    expect(files.map((f) => f.path)).to.deep.equal(['dn42-peer2', 'wg-dialin', 'wg-nokey', 'wg42', 'wg43', 'wg44'].map((n) => `wireguard/${n}.conf`));
    expect(files.every((f) => f.mode === 0o600)).to.equal(true);
    const wg42 = file(files, 'wireguard/wg42.conf').content;
    expect(wg42).to.include(`[Interface]\nPrivateKey = ${PRIVATE_KEYS.fra1}\nListenPort = 51801\n\n[Peer]\n`);
    expect(wg42).to.include('Endpoint = 192.0.2.1:51820\nAllowedIPs = 0.0.0.0/0, ::/0\nPersistentKeepalive = 25\n');
    expect(wg42).not.to.match(/Address|MTU/i);
  });

  it('leaves the peer out while its public key is unknown, and optional lines out when unset', () => {
    const files = render();
    expect(file(files, 'wireguard/wg-nokey.conf').content).not.to.include('[Peer]');
    const dialIn = file(files, 'wireguard/wg-dialin.conf').content;
    expect(dialIn).to.include('[Peer]');
    expect(dialIn).not.to.match(/Endpoint|PersistentKeepalive|PresharedKey/);
  });

  it('resolves preshared_key_ref through the keys the agent read, and gives bare allowed IPs their length', () => {
    const wg44 = file(render(), 'wireguard/wg44.conf').content;
    expect(wg44).to.include(`PresharedKey = ${PSK}\n`);
    expect(wg44).to.include('Endpoint = [2001:db8::44]:51820\nAllowedIPs = fe80::/64, 172.20.16.9/32\n');
  });

  it('fails the render for a ref without a key or with a malformed one, and for a bad private key', () => {
    const state = sessions();
    const wg44 = state.interfaces.find((i) => i.name === 'wg44')!;
    expect(() => renderAll({ state, wireguardPrivateKey: PRIVATE_KEYS.fra1, renderedDir: '/r' })).to.throw(
      RenderError,
      "no preshared key for preshared_key_ref 'as44' (interface wg44)",
    );
    expect(() => wireguardConfig(wg44, 'fra1', PRIVATE_KEYS.fra1, { as44: 'short' })).to.throw(RenderError, /invalid preshared key/);
    expect(() => wireguardConfig(wg44, 'fra1', 'not-a-key', { as44: PSK })).to.throw(RenderError, /invalid WireGuard private key/);
  });

  describe('preshared key refs', () => {
    it('lists the refs once each, and maps a ref to a file under <state-dir>/wireguard-psk', () => {
      expect(presharedKeyRefs(sessions())).to.deep.equal(['as44']);
      expect(presharedKeyPath('/var/lib/dn42-control', 'as44')).to.equal('/var/lib/dn42-control/wireguard-psk/as44');
      for (const bad of ['../etc/shadow', 'a/b', '.hidden', '']) expect(() => presharedKeyPath('/s', bad)).to.throw(RenderError, /invalid preshared_key_ref/);
    });

    it('reads the keys that exist and leaves out those that do not', async () => {
      await inTempDir(async (stateDir) => {
        const state = sessions();
        expect(await readPresharedKeys(stateDir, state)).to.deep.equal({});
        await mkdir(join(stateDir, 'wireguard-psk'));
        await writeFile(join(stateDir, 'wireguard-psk', 'as44'), `${PSK}\n`, { mode: 0o600 });
        expect(await readPresharedKeys(stateDir, state)).to.deep.equal({ as44: PSK });
      });
    });
  });

  describe('accepted by the real wg setconf', () => {
    const cases = { sessions: sessions(), ...Object.fromEntries(MESH.map((n) => [`mesh ${n}`, meshState(n)])) };
    for (const [name, state] of Object.entries(cases)) {
      it(`parses every interface file of ${name}`, async () => {
        await renderedInTempDir({ state, wireguardPrivateKey: PRIVATE_KEYS.fra1, presharedKeys: { as44: PSK } }, async (dir, files) => {
          const confs = files.filter((f) => f.path.startsWith('wireguard/'));
          expect(confs).to.have.length(state.interfaces.length);
          for (const f of confs) await expectWgParses(join(dir, f.path));
        });
      });
    }

    it('tells a parse error apart from the missing device (the check above can fail)', async () => {
      await inTempDir(async (dir) => {
        const path = join(dir, 'bad.conf');
        await writeFile(path, `${file(render(), 'wireguard/wg42.conf').content}Address = fe80::1/64\n`);
        const r = await run('wg', ['setconf', 'dn42absent0', path]);
        expect(r.stderr).to.match(/Line unrecognized: `Address=fe80::1\/64'\nConfiguration parsing error/);
      });
    });
  });

  describe('interface plan (ip)', () => {
    it('creates, sizes, addresses and raises each interface, after the loopback addresses', () => {
      const plan = interfacePlan(meshState('fra1'));
      expect(plan.slice(0, 2)).to.deep.equal([
        ['address', 'replace', '172.20.0.1/32', 'dev', 'lo'],
        ['address', 'replace', 'fd00:1::1/128', 'dev', 'lo'],
      ]);
      expect(plan.slice(2, 7)).to.deep.equal([
        ['link', 'add', 'dev', 'int-ber1', 'type', 'wireguard'],
        ['link', 'set', 'dev', 'int-ber1', 'mtu', '1420'],
        ['address', 'replace', '172.20.0.1/32', 'peer', '172.20.0.2/32', 'dev', 'int-ber1'],
        ['address', 'replace', 'fe80::1/64', 'dev', 'int-ber1'],
        ['link', 'set', 'dev', 'int-ber1', 'up'],
      ]);
      expect(plan).to.deep.include(['address', 'replace', 'fe80::1/64', 'peer', 'fe80::42/128', 'dev', 'dn42-as42']);
    });

    it('puts the DNS bind addresses on lo, each address once', () => {
      const lo = interfacePlan(dns()).filter((c) => c.at(-1) === 'lo');
      expect(lo.map((c) => c[2])).to.deep.equal(['172.20.0.1/32', 'fd00:1::1/128', '172.20.0.53/32', 'fd00:1::53/128']);
    });

    it('renders the plan as interfaces/<name>.json, the same commands as interfacePlan', () => {
      const state = sessions();
      const files = render(state).filter((f) => f.path.startsWith('interfaces/'));
      expect(files.map((f) => f.path)).to.include.members(['interfaces/lo.json', 'interfaces/dn42-peer2.json']);
      const plans = files.map((f) => JSON.parse(f.content) as { interface: string; mtu?: number; ip: string[][] });
      expect(plans.find((p) => p.interface === 'dn42-peer2')).to.include({ mtu: 1280 });
      const byName = new Map(plans.map((p) => [p.interface, p.ip]));
      expect(['lo', ...state.interfaces.map((i) => i.name)].flatMap((n) => byName.get(n)!)).to.deep.equal(interfacePlan(state));
    });

    it('has nothing for a node without loopbacks or interfaces', () => {
      const state = standalone();
      state.node.loopback_ipv4 = null;
      state.node.loopback_ipv6 = null;
      expect(interfacePlan(state)).to.deep.equal([]);
    });
  });
});

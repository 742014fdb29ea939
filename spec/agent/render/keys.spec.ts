import { execFile } from 'node:child_process';
import { expect } from 'chai';
import { generateWireguardPrivateKey, wireguardPublicKey } from '../../../agent/render/index.js';
import { PRIVATE_KEYS, run } from './support.js';

/** What the real `wg pubkey` prints for a private key. */
function wgPubkey(privateKey: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile('wg', ['pubkey'], (error, stdout) => (error ? reject(error) : resolve(stdout.trim())));
    child.stdin?.end(`${privateKey}\n`);
  });
}

describe('agent render: WireGuard keys', () => {
  it('derives the public key `wg pubkey` derives, without the wg binary', async () => {
    for (const privateKey of Object.values(PRIVATE_KEYS)) expect(wireguardPublicKey(privateKey)).to.equal(await wgPubkey(privateKey));
  });

  it('generates distinct clamped keys that wg accepts', async () => {
    const keys = Array.from({ length: 5 }, generateWireguardPrivateKey);
    expect(new Set(keys).size).to.equal(5);
    for (const k of keys) {
      const raw = Buffer.from(k, 'base64');
      expect(raw).to.have.length(32);
      expect(raw[0] & 7, 'low bits cleared').to.equal(0);
      expect(raw[31] & 0xc0, 'high bit cleared, second highest set').to.equal(0x40);
      expect(wireguardPublicKey(k)).to.equal(await wgPubkey(k));
    }
  });

  it('refuses a key that is not 32 bytes of base64', () => {
    expect(() => wireguardPublicKey('AAAA')).to.throw(/invalid WireGuard key/);
    expect(() => wireguardPublicKey(`${PRIVATE_KEYS.fra1.slice(0, -2)}!=`)).to.throw(/invalid WireGuard key/);
  });

  it('agrees with wg on a key wg generated', async () => {
    const generated = (await run('wg', ['genkey'])).stdout.trim();
    expect(wireguardPublicKey(generated)).to.equal(await wgPubkey(generated));
  });
});

import { expect } from 'chai';
import { classifyAuth, normaliseFingerprint } from '../../../domain/registry/auth.js';
import { fingerprint, sshKey } from '../../support/registry.js';

describe('Mntner auth methods', () => {
  const fpr = fingerprint('x');

  it('normalises fingerprints written with spaces and lower case', () => {
    const spaced = fpr.toLowerCase().replace(/(.{4})/g, '$1 ');
    expect(normaliseFingerprint(spaced)).to.equal(fpr);
    expect(normaliseFingerprint(fpr.slice(0, 39))).to.equal(null);
    expect(normaliseFingerprint(`${fpr.slice(0, 39)}G`)).to.equal(null);
  });

  it('reads pgp-fingerprint in either case', () => {
    expect(classifyAuth(`pgp-fingerprint ${fpr.toLowerCase()}`)).to.deep.equal({ kind: 'pgp', method: 'pgp-fingerprint', fingerprint: fpr });
    expect(classifyAuth(`PGP-FINGERPRINT ${fpr}`)).to.deep.include({ kind: 'pgp', fingerprint: fpr });
  });

  it('reads PGPKEY-<8 hex> as a reference to a key-cert', () => {
    expect(classifyAuth('pgpkey-f164e04f')).to.deep.equal({ kind: 'pgp-key-cert', keyCert: 'PGPKEY-F164E04F', keyId: 'F164E04F' });
  });

  for (const type of ['ssh-ed25519', 'ssh-rsa', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521']) {
    it(`reads ${type} keys with their comment`, () => {
      const key = sshKey(type, type);
      expect(classifyAuth(`${key} me@host extra`)).to.deep.equal({ kind: 'ssh', method: type, key, comment: 'me@host extra', hardwareKey: false });
    });
  }

  for (const type of ['sk-ssh-ed25519@openssh.com', 'sk-ecdsa-sha2-nistp256@openssh.com']) {
    it(`keeps ${type} keys and marks them as hardware keys`, () => {
      expect(classifyAuth(sshKey(type, type))).to.deep.include({ kind: 'ssh', method: type, hardwareKey: true, comment: '' });
    });
  }

  for (const line of [
    'ed25519-pw AAAAC3',
    'signify RWQabc',
    'mntner FOO-MNT',
    'ssh-ed2519 AAAAC3NzaC1lZDI1NTE5AAAA',
    'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA',
    `ssh-ed25519 ${sshKey('ssh-rsa', 'mismatch').split(' ')[1]}`,
    'ssh-ed25519',
    'pgp-fingerprint 0123',
    'PGPKEY-F164E04F trailing',
    '',
  ]) {
    it(`ignores ${JSON.stringify(line)}`, () => {
      expect(classifyAuth(line).kind).to.equal('ignored');
    });
  }
});

import { expect } from 'chai';
import type { AutNum, Contact, KeyCert, Mntner } from '../../../domain/registry/objects.js';
import { authOptions, contactHandles, optionId, verificationOptions } from '../../../domain/registry/options.js';
import { fingerprint, sshKey } from '../../support/registry.js';

const autNum = (over: Partial<AutNum> = {}): AutNum => ({
  asn: 1,
  asName: 'X',
  descr: null,
  mntBy: ['A-MNT'],
  adminC: ['P1'],
  techC: ['P2'],
  org: null,
  ...over,
});
const mntner = (over: Partial<Mntner> = {}): Mntner => ({ name: 'A-MNT', descr: null, mntBy: [], adminC: ['P3'], techC: ['P1', 'ROLE'], auth: [], ...over });
const person = (handle: string, emails: string[]): Contact => ({ handle, kind: 'person', name: `Name ${handle}`, emails });

describe('Verification options', () => {
  const fpr = fingerprint('k');
  const keyCert: KeyCert = { name: 'PGPKEY-ABCD1234', fingerprint: `${fpr.slice(0, 32)}ABCD1234`, method: 'PGP', owner: [], armor: '', mntBy: [] };
  const keyCerts = new Map([[keyCert.name, keyCert]]);

  it('derives ids from mntner, kind and value only', () => {
    const id = optionId('A-MNT', 'ssh', 'ssh-ed25519 AAAA');
    expect(id).to.match(/^ssh-[0-9a-f]{24}$/);
    expect(optionId('a-mnt', 'ssh', 'ssh-ed25519 AAAA')).to.equal(id);
    expect(optionId('B-MNT', 'ssh', 'ssh-ed25519 AAAA')).to.not.equal(id);
    expect(optionId('A-MNT', 'email', 'X@Example.net ')).to.equal(optionId('A-MNT', 'email', 'x@example.net'));
  });

  it('resolves PGPKEY-* through the key-cert and counts a fingerprint once', () => {
    const m = mntner({ auth: ['PGPKEY-ABCD1234', `pgp-fingerprint ${keyCert.fingerprint!.toLowerCase()}`, 'PGPKEY-FFFFFFFF'] });
    const options = authOptions(m, keyCerts);
    expect(options).to.have.length(1);
    expect(options[0]).to.deep.include({ kind: 'pgp', method: 'pgp-fingerprint', value: keyCert.fingerprint, comment: 'PGPKEY-ABCD1234', mntner: 'A-MNT' });
  });

  it('refuses a key-cert whose fingerprint does not end with the referenced id', () => {
    const wrong: KeyCert = { ...keyCert, name: 'PGPKEY-11111111' };
    expect(authOptions(mntner({ auth: ['PGPKEY-11111111'] }), new Map([[wrong.name, wrong]]))).to.deep.equal([]);
  });

  it('lists ssh keys in auth order, marking sk-* keys', () => {
    const ed = sshKey('ssh-ed25519', '1');
    const sk = sshKey('sk-ecdsa-sha2-nistp256@openssh.com', '2');
    const options = authOptions(mntner({ auth: [`${sk} token`, `${ed} laptop`] }), keyCerts);
    expect(options.map((o) => [o.method, o.value, o.comment, o.hardware_key])).to.deep.equal([
      ['sk-ecdsa-sha2-nistp256@openssh.com', sk, 'token', true],
      ['ssh-ed25519', ed, 'laptop', false],
    ]);
  });

  it('takes persons from the aut-num and the maintainer admin-c/tech-c, one hop, roles skipped', () => {
    expect(contactHandles(autNum(), mntner())).to.deep.equal(['P1', 'P2', 'P3', 'ROLE']);
    const contacts = new Map<string, Contact>([
      ['P1', person('P1', ['one@example.net', 'ONE@example.net'])],
      ['P2', person('P2', [])],
      ['P3', person('P3', ['three@example.net'])],
      ['ROLE', { handle: 'ROLE', kind: 'role', name: 'Ops', emails: [] }],
    ]);
    const options = verificationOptions(autNum(), [mntner()], new Map(), contacts);
    expect(options.map((o) => [o.kind, o.value, o.comment])).to.deep.equal([
      ['email', 'one@example.net', 'Name P1 (P1)'],
      ['email', 'three@example.net', 'Name P3 (P3)'],
    ]);
  });

  it('gives each maintainer of the ASN its own options, in mnt-by order', () => {
    const a = mntner({ name: 'A-MNT', adminC: [], techC: [], auth: [sshKey('ssh-ed25519', 'a')] });
    const b = mntner({ name: 'B-MNT', adminC: [], techC: [], auth: [sshKey('ssh-ed25519', 'a')] });
    const auth = new Map([
      ['A-MNT', authOptions(a, keyCerts)],
      ['B-MNT', authOptions(b, keyCerts)],
    ]);
    const contacts = new Map([['P1', person('P1', ['one@example.net'])]]);
    const options = verificationOptions(autNum({ mntBy: ['B-MNT', 'A-MNT'], techC: [] }), [b, a], auth, contacts);
    expect(options.map((o) => `${o.mntner}:${o.kind}`)).to.deep.equal(['B-MNT:ssh', 'B-MNT:email', 'A-MNT:ssh', 'A-MNT:email']);
    expect(new Set(options.map((o) => o.id)).size).to.equal(4);
  });
});

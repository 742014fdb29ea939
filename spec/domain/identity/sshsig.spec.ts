import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { copyFileSync, readFileSync } from 'node:fs';
import { createHash, createPrivateKey, randomBytes, sign } from 'node:crypto';
import { verifySshSignature, type SshVerdict } from '../../../domain/identity/sshsig.js';
import { armorSshSig as armor, fakeHardwareKey, SSH_NAMESPACE, sshString as str, SshKeyPair, type SshKeyKind } from '../../support/keys.js';

const NONCE = 'AS4242420001-6f1d0c2e9a7b4e55b3f2a1c0d9e8f7a6';

function uint32(value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(value);
  return b;
}

interface Fields {
  magic?: string;
  version?: number;
  publicKey: Buffer;
  namespace: string;
  reserved?: Buffer;
  hashAlgorithm: string;
  signature: Buffer;
  trailing?: Buffer;
}

function blob(f: Fields): Buffer {
  return Buffer.concat([
    Buffer.from(f.magic ?? 'SSHSIG', 'latin1'),
    uint32(f.version ?? 1),
    str(f.publicKey),
    str(f.namespace),
    str(f.reserved ?? Buffer.alloc(0)),
    str(f.hashAlgorithm),
    str(f.signature),
    f.trailing ?? Buffer.alloc(0),
  ]);
}

/** Reads SSH wire strings one after another. */
class Reader {
  private o = 0;
  constructor(private readonly b: Buffer) {}
  string(): Buffer {
    const length = this.b.readUInt32BE(this.o);
    const value = this.b.subarray(this.o + 4, this.o + 4 + length);
    this.o += 4 + length;
    return value;
  }
}

/** Reads back the fields of an armored signature made by ssh-keygen, to rebuild altered copies. */
function fields(armored: string): Fields {
  const body = armored.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, '');
  const r = new Reader(Buffer.from(body, 'base64').subarray(10));
  const next = () => r.string();
  return { publicKey: next(), namespace: next().toString(), reserved: next(), hashAlgorithm: next().toString(), signature: next() };
}

/** The data an SSHSIG signature covers. */
function signedData(namespace: string, hashAlgorithm: string, message: string): Buffer {
  const hash = createHash(hashAlgorithm === 'sha1' ? 'sha1' : hashAlgorithm)
    .update(message)
    .digest();
  return Buffer.concat([Buffer.from('SSHSIG'), str(namespace), str(Buffer.alloc(0)), str(hashAlgorithm), str(hash)]);
}

function keyBlob(publicKey: string): Buffer {
  return Buffer.from(publicKey.split(' ')[1], 'base64');
}

function check(armored: string, registeredKeys: readonly string[], message = NONCE, namespace = SSH_NAMESPACE): SshVerdict {
  return verifySshSignature({ armored, message, namespace, registeredKeys });
}

function expectRefused(verdict: SshVerdict, reason: string, detail?: RegExp): void {
  expect(verdict.ok, JSON.stringify(verdict)).to.equal(false);
  if (verdict.ok) return;
  expect(verdict.reason).to.equal(reason);
  if (detail) expect(verdict.detail).to.match(detail);
}

describe('SSH signature (SSHSIG) verification', function () {
  this.timeout(60_000);
  const keys = new Map<SshKeyKind, SshKeyPair>();
  const key = (kind: SshKeyKind) => keys.get(kind)!;
  let other: SshKeyPair;

  before(() => {
    for (const kind of ['ed25519', 'ecdsa-256', 'ecdsa-384', 'ecdsa-521', 'rsa'] as const) keys.set(kind, SshKeyPair.generate(kind));
    other = SshKeyPair.generate('ed25519');
  });
  after(() => {
    for (const k of keys.values()) k.destroy();
    other?.destroy();
  });

  describe('signatures made by ssh-keygen -Y sign', () => {
    for (const kind of ['ed25519', 'ecdsa-256', 'ecdsa-384', 'ecdsa-521', 'rsa'] as const) {
      it(`accepts a ${kind} signature whose key is registered and names that key`, () => {
        const verdict = check(key(kind).sign(NONCE), [other.publicKey, key(kind).publicKey]);
        expect(verdict).to.deep.equal({ ok: true, key: key(kind).publicKey });
      });
    }

    it('accepts the sha256 hash as well as the default sha512', () => {
      const armored = key('ed25519').sign(NONCE, SSH_NAMESPACE, ['-O', 'hashalg=sha256']);
      expect(fields(armored).hashAlgorithm).to.equal('sha256');
      expect(check(armored, [key('ed25519').publicKey]).ok).to.equal(true);
    });

    it('accepts a signature over the nonce and one trailing newline (echo nonce | ssh-keygen)', () => {
      expect(check(key('ecdsa-256').sign(`${NONCE}\n`), [key('ecdsa-256').publicKey]).ok).to.equal(true);
    });

    it('accepts CRLF line ends and surrounding blank lines in the armor', () => {
      const armored = `\r\n  ${key('ed25519').sign(NONCE).replace(/\n/g, '\r\n')}\r\n`;
      expect(check(armored, [key('ed25519').publicKey]).ok).to.equal(true);
    });

    it('refuses a signature made in another namespace', () => {
      expectRefused(check(key('ed25519').sign(NONCE, 'file'), [key('ed25519').publicKey]), 'namespace', /"file", expected "dn42-autopeer"/);
    });

    it('refuses a namespace that only starts like the expected one', () => {
      expectRefused(check(key('ed25519').sign(NONCE, `${SSH_NAMESPACE}x`), [key('ed25519').publicKey]), 'namespace');
    });

    it('refuses a signature over another nonce', () => {
      for (const kind of ['ed25519', 'ecdsa-384', 'rsa'] as const) {
        expectRefused(check(key(kind).sign(NONCE), [key(kind).publicKey], `${NONCE.slice(0, -1)}0`), 'bad-signature');
      }
    });

    it('refuses a signature over the nonce with extra text', () => {
      expectRefused(check(key('ed25519').sign(`${NONCE} and more`), [key('ed25519').publicKey]), 'bad-signature');
    });

    it('refuses a key that is not registered for the option', () => {
      expectRefused(check(other.sign(NONCE), [key('ed25519').publicKey, key('rsa').publicKey]), 'unknown-key', /ssh-ed25519/);
      expectRefused(check(other.sign(NONCE), []), 'unknown-key');
    });

    it('refuses a signature whose embedded key was swapped for a registered one', () => {
      const f = fields(other.sign(NONCE));
      const forged = armor(blob({ ...f, publicKey: keyBlob(key('ed25519').publicKey) }));
      expectRefused(check(forged, [key('ed25519').publicKey]), 'bad-signature');
    });

    it('refuses a signature algorithm that does not belong to the key', () => {
      const f = fields(key('ecdsa-256').sign(NONCE));
      const otherCurve = fields(key('ecdsa-384').sign(NONCE));
      const mixed = armor(blob({ ...f, signature: otherCurve.signature }));
      expectRefused(check(mixed, [key('ecdsa-256').publicKey]), 'unsupported-algorithm', /ecdsa-sha2-nistp384 does not belong to a ecdsa-sha2-nistp256 key/);
    });
  });

  describe('RSA signature algorithms', () => {
    let rsaPrivate: ReturnType<typeof createPrivateKey>;

    before(() => {
      // ssh-keygen signs with rsa-sha2-512 only; a PEM copy of the key lets the spec make the other forms.
      const pem = `${key('rsa').path}.pem`;
      copyFileSync(key('rsa').path, pem);
      execFileSync('ssh-keygen', ['-p', '-m', 'PEM', '-N', '', '-P', '', '-f', pem], { stdio: 'ignore' });
      rsaPrivate = createPrivateKey(readFileSync(pem));
    });

    function rsaSignature(sigType: string, hash: string, hashAlgorithm = 'sha512'): string {
      const signature = sign(hash, signedData(SSH_NAMESPACE, hashAlgorithm, NONCE), rsaPrivate);
      return armor(
        blob({ publicKey: keyBlob(key('rsa').publicKey), namespace: SSH_NAMESPACE, hashAlgorithm, signature: Buffer.concat([str(sigType), str(signature)]) }),
      );
    }

    it('ssh-keygen signs with rsa-sha2-512 (the case verified above)', () => {
      expect(new Reader(fields(key('rsa').sign(NONCE)).signature).string().toString()).to.equal('rsa-sha2-512');
    });

    it('accepts rsa-sha2-256', () => {
      expect(check(rsaSignature('rsa-sha2-256', 'sha256'), [key('rsa').publicKey]).ok).to.equal(true);
    });

    it('refuses an ssh-rsa (SHA-1) signature even when it is valid', () => {
      expectRefused(check(rsaSignature('ssh-rsa', 'sha1'), [key('rsa').publicKey]), 'unsupported-algorithm', /SHA-1/);
    });

    it('refuses an rsa-sha2-256 label over a SHA-512 signature', () => {
      expectRefused(check(rsaSignature('rsa-sha2-256', 'sha512'), [key('rsa').publicKey]), 'bad-signature');
    });

    it('refuses a message hash other than sha256 and sha512', () => {
      expectRefused(check(rsaSignature('rsa-sha2-256', 'sha256', 'sha1'), [key('rsa').publicKey]), 'unsupported-algorithm', /hash algorithm sha1/);
    });
  });

  describe('hardware (sk-*) keys', () => {
    it('refuses an sk-ssh-ed25519 signature by name, even when the key is registered', () => {
      const sk = fakeHardwareKey();
      expectRefused(check(sk.sign(NONCE), [sk.publicKey]), 'hardware-key', /hardware security keys \(sk-ssh-ed25519@openssh.com\)/);
    });

    it('refuses an sk-ecdsa key the same way', () => {
      const type = 'sk-ecdsa-sha2-nistp256@openssh.com';
      const publicKey = Buffer.concat([str(type), str('nistp256'), str(Buffer.concat([Buffer.from([4]), randomBytes(64)])), str('ssh:')]);
      const armored = armor(
        blob({
          publicKey,
          namespace: SSH_NAMESPACE,
          hashAlgorithm: 'sha512',
          signature: Buffer.concat([str(type), str(randomBytes(72)), Buffer.from([1]), uint32(1)]),
        }),
      );
      expectRefused(check(armored, []), 'hardware-key');
    });
  });

  describe('malformed answers', () => {
    const good = () => fields(key('ed25519').sign(NONCE));
    const registered = () => [key('ed25519').publicKey];

    it('refuses text that is not an armored SSH signature', () => {
      expectRefused(check('123456', registered()), 'malformed', /not an SSH signature/);
      expectRefused(check('', registered()), 'malformed');
      expectRefused(check(key('ed25519').sign(NONCE).replace('SSH SIGNATURE', 'PGP SIGNATURE'), registered()), 'malformed');
    });

    it('refuses an armor whose body is not base64', () => {
      expectRefused(check('-----BEGIN SSH SIGNATURE-----\nU1NI*0lH\n-----END SSH SIGNATURE-----', registered()), 'malformed', /base64/);
    });

    it('refuses another magic, another version, a truncated blob and trailing bytes', () => {
      expectRefused(check(armor(blob({ ...good(), magic: 'SSHSIH' })), registered()), 'malformed', /SSHSIG/);
      expectRefused(check(armor(blob({ ...good(), version: 2 })), registered()), 'malformed', /version 2/);
      expectRefused(check(armor(blob(good()).subarray(0, 60)), registered()), 'malformed', /truncated/);
      expectRefused(check(armor(blob({ ...good(), trailing: Buffer.from([0]) })), registered()), 'malformed', /trailing/);
    });

    it('refuses an over-long answer without parsing it', () => {
      expectRefused(check(`-----BEGIN SSH SIGNATURE-----\n${'A'.repeat(20_000)}\n-----END SSH SIGNATURE-----`, registered()), 'malformed', /too long/);
    });

    it('refuses a truncated signature field as a bad signature, not a crash', () => {
      const f = good();
      const inner = new Reader(f.signature);
      const sigType = inner.string();
      const bytes = inner.string().subarray(0, 40);
      expectRefused(check(armor(blob({ ...f, signature: Buffer.concat([str(sigType), str(bytes)]) })), registered()), 'bad-signature');
    });
  });
});

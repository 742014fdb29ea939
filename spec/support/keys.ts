import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';

/**
 * Real SSH and OpenPGP keys for specs, made and used by the system's `ssh-keygen`
 * and `gpg`: signatures come from the tools users run, not from our own code.
 */

export type SshKeyKind = 'ed25519' | 'ecdsa-256' | 'ecdsa-384' | 'ecdsa-521' | 'rsa';

export const SSH_NAMESPACE = 'dn42-autopeer';

export class SshKeyPair {
  /** `<type> <base64>` as the registry holds it (no comment). */
  readonly publicKey: string;
  readonly type: string;

  private constructor(
    readonly dir: string,
    readonly path: string,
  ) {
    const [type, base64] = readFileSync(`${path}.pub`, 'utf8').trim().split(/\s+/);
    this.type = type;
    this.publicKey = `${type} ${base64}`;
  }

  static generate(kind: SshKeyKind): SshKeyPair {
    const dir = mkdtempSync(join(tmpdir(), 'dn42-ssh-'));
    const path = join(dir, 'key');
    const [type, bits] = kind.startsWith('ecdsa') ? ['ecdsa', kind.slice('ecdsa-'.length)] : kind === 'rsa' ? ['rsa', '3072'] : ['ed25519', undefined];
    execFileSync('ssh-keygen', ['-q', '-t', type, ...(bits ? ['-b', bits] : []), '-N', '', '-C', `spec-${kind}`, '-f', path], { stdio: 'ignore' });
    return new SshKeyPair(dir, path);
  }

  /** `ssh-keygen -Y sign` over exactly `message` (the bytes, no newline added); extra args go before `-f`, e.g. `['-O', 'hashalg=sha256']`. */
  sign(message: string, namespace = SSH_NAMESPACE, extra: readonly string[] = []): string {
    return execFileSync('ssh-keygen', ['-Y', 'sign', ...extra, '-f', this.path, '-n', namespace], {
      input: message,
      stdio: ['pipe', 'pipe', 'ignore'],
    }).toString('utf8');
  }

  destroy(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A throw-away GnuPG home (no passphrases); `destroy` stops its agent and removes it. */
export class GpgHome {
  readonly dir = mkdtempSync(join(tmpdir(), 'dn42-gpg-'));

  gpg(args: readonly string[], input?: string): string {
    return execFileSync('gpg', ['--batch', '--quiet', '--no-tty', '--pinentry-mode', 'loopback', '--passphrase', '', ...args], {
      env: { ...process.env, GNUPGHOME: this.dir },
      input,
      stdio: ['pipe', 'pipe', 'pipe'],
    }).toString('utf8');
  }

  /** A new signing key (`ed25519` by default, or e.g. `rsa2048`); returns its 40-hex fingerprint, upper case. */
  generate(uid: string, algorithm = 'ed25519'): string {
    this.gpg(['--quick-gen-key', uid, algorithm, 'sign', 'never']);
    return this.generatedFingerprint(uid);
  }

  private generatedFingerprint(uid: string): string {
    const listing = this.gpg(['--with-colons', '--fingerprint', '--list-keys', uid]);
    const fpr = listing.split('\n').find((line) => line.startsWith('fpr:'));
    if (!fpr) throw new Error(`gpg listed no fingerprint for ${uid}`);
    return fpr.split(':')[9].toUpperCase();
  }

  /** A primary key that only certifies, with an ed25519 signing subkey: gpg then signs with the subkey. Returns the primary fingerprint. */
  generateWithSigningSubkey(uid: string): string {
    this.gpg(['--quick-gen-key', uid, 'ed25519', 'cert', 'never']);
    const fingerprint = this.generatedFingerprint(uid);
    this.gpg(['--quick-add-key', fingerprint, 'ed25519', 'sign', 'never']);
    return fingerprint;
  }

  /** The ASCII-armored public key of `fingerprint`. */
  exportPublic(fingerprint: string): string {
    return this.gpg(['--armor', '--export', fingerprint]);
  }

  /** The ASCII-armored secret key of `fingerprint` (for the spec that checks it is refused). */
  exportSecret(fingerprint: string): string {
    return this.gpg(['--armor', '--export-secret-keys', fingerprint]);
  }

  /** `gpg --clearsign` of `text` with `fingerprint`. */
  clearsign(fingerprint: string, text: string): string {
    return this.gpg(['--local-user', fingerprint, '--clearsign'], text);
  }

  destroy(): void {
    try {
      execFileSync('gpgconf', ['--kill', 'gpg-agent'], { env: { ...process.env, GNUPGHOME: this.dir }, stdio: 'ignore' });
    } catch {
      // No agent was started; nothing to stop.
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A loopback HKP key server: `GET /pks/lookup?op=get&options=mr&search=0x<FPR>` answers the key stored under that fingerprint, else 404. */
export class TestKeyserver {
  readonly keys = new Map<string, string>();
  /** Every request's path and query, in order. */
  readonly requests: string[] = [];
  private server?: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      this.requests.push(req.url ?? '');
      const url = new URL(req.url ?? '/', 'http://keyserver');
      const search = url.searchParams.get('search') ?? '';
      const key = url.pathname === '/pks/lookup' && url.searchParams.get('op') === 'get' ? this.keys.get(search.replace(/^0x/i, '').toUpperCase()) : undefined;
      if (key === undefined) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('No results found');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/pgp-keys' }).end(key);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** A loopback URL nothing listens on (a port that was just bound and released). */
export async function closedUrl(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}`;
}

/** SSH wire string: uint32 length, bytes. */
export function sshString(value: Buffer | string): Buffer {
  const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

/** An SSHSIG blob in its armor, 70 base64 characters a line like ssh-keygen writes it. */
export function armorSshSig(blob: Buffer): string {
  return ['-----BEGIN SSH SIGNATURE-----', ...blob.toString('base64').match(/.{1,70}/g)!, '-----END SSH SIGNATURE-----', ''].join('\n');
}

/**
 * A FIDO `sk-ssh-ed25519@openssh.com` key as the registry lists it, and SSHSIG
 * answers in its name. No hardware is at hand, so the signature bytes are random:
 * the point is that such answers are refused by key type before any cryptography.
 */
export function fakeHardwareKey(): { publicKey: string; sign(message: string, namespace?: string): string } {
  const type = 'sk-ssh-ed25519@openssh.com';
  const blob = Buffer.concat([sshString(type), sshString(randomBytes(32)), sshString('ssh:')]);
  return {
    publicKey: `${type} ${blob.toString('base64')}`,
    sign: (_message, namespace = SSH_NAMESPACE) => {
      const flagsAndCounter = Buffer.from([0x01, 0, 0, 0, 7]);
      const signature = Buffer.concat([sshString(type), sshString(randomBytes(64)), flagsAndCounter]);
      const version = Buffer.from([0, 0, 0, 1]);
      return armorSshSig(
        Buffer.concat([Buffer.from('SSHSIG'), version, sshString(blob), sshString(namespace), sshString(''), sshString('sha512'), sshString(signature)]),
      );
    },
  };
}

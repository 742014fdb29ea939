import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
    return execFileSync('ssh-keygen', ['-Y', 'sign', ...extra, '-f', this.path, '-n', namespace], { input: message, stdio: ['pipe', 'pipe', 'ignore'] }).toString('utf8');
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
    const listing = this.gpg(['--with-colons', '--fingerprint', '--list-keys', uid]);
    const fpr = listing.split('\n').find((line) => line.startsWith('fpr:'));
    if (!fpr) throw new Error(`gpg listed no fingerprint for ${uid}`);
    return fpr.split(':')[9].toUpperCase();
  }

  /** The ASCII-armored public key of `fingerprint`. */
  exportPublic(fingerprint: string): string {
    return this.gpg(['--armor', '--export', fingerprint]);
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

import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { defaultKeyFile, pgpSignCommand, shellQuote, shellWord, sshSignCommand, SSH_NAMESPACE } from '../../web/authorize/commands.js';
import { verifySshSignature } from '../../domain/identity/sshsig.js';
import { GpgHome, SshKeyPair, type SshKeyKind } from '../support/keys.js';

/** Runs a command line exactly as shown on the page, in `sh`, with a home of our choosing. */
function runAsShown(command: string, env: Record<string, string>): string {
  return execFileSync('sh', ['-c', command], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }).toString('utf8');
}

/** A throw-away home whose `~/.ssh/<file>` is the key pair's private key. */
function homeWith(key: SshKeyPair, file: string): string {
  const home = mkdtempSync(join(tmpdir(), 'dn42-home-'));
  mkdirSync(join(home, '.ssh'), { mode: 0o700 });
  const target = join(home, '.ssh', file);
  copyFileSync(key.path, target);
  chmodSync(target, 0o600);
  return home;
}

describe('Authorization page: signing commands', function () {
  this.timeout(60_000);

  it('quotes any text as one literal shell word', () => {
    for (const text of [`it's`, '$HOME `id` "x" \\n', 'AS1-abc', '']) {
      expect(runAsShown(`printf '%s' ${shellQuote(text)}`, {})).to.equal(text);
    }
    expect(shellWord('0123ABCD')).to.equal('0123ABCD');
    expect(shellWord('a b')).to.equal(`'a b'`);
  });

  it('names the usual private key file of each key type', () => {
    expect(['ssh-ed25519', 'ecdsa-sha2-nistp256', 'ssh-rsa', 'sk-ssh-ed25519@openssh.com'].map(defaultKeyFile)).to.deep.equal([
      '~/.ssh/id_ed25519',
      '~/.ssh/id_ecdsa',
      '~/.ssh/id_rsa',
      '~/.ssh/id_ed25519_sk',
    ]);
  });

  for (const kind of ['ed25519', 'ecdsa-256', 'rsa'] as SshKeyKind[]) {
    it(`the SSH command, run as shown, signs exactly the nonce with a ${kind} key in namespace ${SSH_NAMESPACE}`, () => {
      const key = SshKeyPair.generate(kind);
      const home = homeWith(key, defaultKeyFile(key.type).replace('~/.ssh/', ''));
      try {
        const nonce = `AS4242420010-it's-$HOME-${kind}`;
        const signature = runAsShown(sshSignCommand(nonce, key.type), { HOME: home });
        expect(signature).to.match(/^-----BEGIN SSH SIGNATURE-----\n[\s\S]+-----END SSH SIGNATURE-----\n$/);
        expect(verifySshSignature({ armored: signature, message: nonce, namespace: SSH_NAMESPACE, registeredKeys: [key.publicKey] })).to.deep.equal({
          ok: true,
          key: key.publicKey,
        });
        // check-novalidate hashes the bytes it is given: the nonce without a newline verifies, so that is what was signed.
        writeFileSync(join(home, 'sig'), signature);
        const checked = execFileSync('ssh-keygen', ['-Y', 'check-novalidate', '-n', SSH_NAMESPACE, '-s', join(home, 'sig')], {
          input: nonce,
          stdio: ['pipe', 'pipe', 'pipe'],
        }).toString();
        expect(checked).to.match(/Good "dn42-autopeer" signature/);
      } finally {
        rmSync(home, { recursive: true, force: true });
        key.destroy();
      }
    });
  }

  it('the PGP command, run as shown, clearsigns exactly the nonce with the registered key', () => {
    const gpg = new GpgHome();
    try {
      const fingerprint = gpg.generate('Gamma <gamma@gamma.example>');
      gpg.generate('Other <other@other.example>');
      const nonce = 'AS4242420010-pgp-nonce';
      const signed = runAsShown(pgpSignCommand(nonce, fingerprint), { GNUPGHOME: gpg.dir });
      expect(signed).to.match(/^-----BEGIN PGP SIGNED MESSAGE-----\n/);
      // The cleartext framework always ends the text with a line end; the service compares the text without it.
      expect(gpg.gpg(['--decrypt'], signed)).to.equal(`${nonce}\n`);
      const status = gpg.gpg(['--status-fd', '1', '--verify'], signed);
      expect(status, 'signed by the key named on the command line, not the newest one').to.include(`VALIDSIG ${fingerprint}`);
    } finally {
      gpg.destroy();
    }
  });
});

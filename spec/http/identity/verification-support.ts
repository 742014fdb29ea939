import type { AddressInfo } from 'node:net';
import { solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import { SMTPServer } from 'smtp-server';
import { encodeTicket } from '../../../infra/captcha/index.js';
import { expectResponse, type api } from '../../support/http.js';
import { startIdentity, type IdentityFixture } from '../../support/identity.js';
import { GpgHome, SshKeyPair } from '../../support/keys.js';
import { rpsl } from '../../support/registry.js';

export const CAPTCHA_SECRET = 'identity-captcha-secret-for-specs';
export const GAMMA_ASN = 4242420010;
export const GAMMA_EMAIL = 'gamma.ops@gamma.example';

/** One message the loopback SMTP server accepted. */
export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

/**
 * A real SMTP server on loopback (`smtp-server`): plain SMTP, no STARTTLS, no
 * auth. Specs read verification codes from what it received, never from storage.
 * `refuse` makes it answer 550 to every message.
 */
export class TestSmtp {
  readonly mails: ReceivedMail[] = [];
  refuse = false;
  private server?: SMTPServer;
  url = '';

  async start(): Promise<this> {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          if (this.refuse) {
            callback(Object.assign(new Error('mailbox unavailable'), { responseCode: 550 }));
            return;
          }
          this.mails.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8'),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `smtp://127.0.0.1:${(this.server.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Mails to `address`, oldest first. */
  to(address: string): ReceivedMail[] {
    return this.mails.filter((m) => m.to.includes(address));
  }

  /** The 6-digit code of the newest mail to `address`. */
  codeFor(address: string): string {
    const mail = this.to(address).at(-1);
    const code =
      mail &&
      /^\s+(\d{6})\s*$/m.exec(
        mail.raw
          .split(/\r?\n\r?\n/)
          .slice(1)
          .join('\n'),
      )?.[1];
    if (!code) throw new Error(`no code mailed to ${address}`);
    return code;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

export interface VerificationFixture extends IdentityFixture {
  smtp: TestSmtp;
  ssh: SshKeyPair;
  gpg: GpgHome;
  pgpFingerprint: string;
  done(): Promise<void>;
}

/**
 * The identity service over the base spec registry plus AS4242420010 (GAMMA-MNT)
 * whose maintainer holds a real SSH key, a real PGP key and one e-mail address,
 * with proof-of-work captcha and mail to the loopback SMTP server.
 */
export async function startVerification(env: Record<string, string> = {}): Promise<VerificationFixture> {
  const smtp = await new TestSmtp().start();
  const f = await startIdentity({ CAPTCHA_KIND: 'pow', CAPTCHA_SECRET, SMTP_URL: smtp.url, MAIL_FROM: 'identity@spec.example', ...env });
  const ssh = SshKeyPair.generate('ed25519');
  const gpg = new GpgHome();
  const pgpFingerprint = gpg.generate('Gamma <gamma@gamma.example>');
  f.repo
    .put(
      'aut-num',
      `AS${GAMMA_ASN}`,
      rpsl([
        ['aut-num', `AS${GAMMA_ASN}`],
        ['as-name', 'GAMMA-AS'],
        ['admin-c', 'GAMMA-DN42'],
        ['mnt-by', 'GAMMA-MNT'],
        ['source', 'DN42'],
      ]),
    )
    .put(
      'mntner',
      'GAMMA-MNT',
      rpsl([
        ['mntner', 'GAMMA-MNT'],
        ['auth', `${ssh.publicKey} gamma@laptop`],
        ['auth', `pgp-fingerprint ${pgpFingerprint}`],
        ['mnt-by', 'GAMMA-MNT'],
        ['source', 'DN42'],
      ]),
    )
    .put(
      'person',
      'GAMMA-DN42',
      rpsl([
        ['person', 'Gina Gamma'],
        ['e-mail', GAMMA_EMAIL],
        ['nic-hdl', 'GAMMA-DN42'],
        ['mnt-by', 'GAMMA-MNT'],
        ['source', 'DN42'],
      ]),
    );
  await f.sync();
  return {
    ...f,
    smtp,
    ssh,
    gpg,
    pgpFingerprint,
    async done() {
      await f.close();
      await smtp.close();
      ssh.destroy();
      gpg.destroy();
    },
  };
}

type Client = ReturnType<typeof api>;

/** A solved proof-of-work ticket, the way the page's widget makes one. */
export async function powTicket(client: Client): Promise<string> {
  const res = await client.get('/api/v1/captcha/challenge');
  expectResponse(res).status(200);
  const solution = await solveChallenge({ challenge: res.body, deriveKey });
  if (!solution) throw new Error('proof of work not solved');
  return encodeTicket(res.body, solution);
}

/** The options of an ASN (captcha solved). */
export async function optionsOf(
  client: Client,
  asn: number,
): Promise<{ id: string; kind: string; value: string; mntner: string; captcha_required: boolean }[]> {
  const res = await client.post('/api/v1/verification-options', { asn, captcha_token: await powTicket(client) });
  expectResponse(res).status(200);
  return res.body.options;
}

/** The id of the first option of `kind` (and, when given, whose value contains `value`). */
export async function optionId(client: Client, asn: number, kind: 'email' | 'ssh' | 'pgp', value?: string): Promise<string> {
  const option = (await optionsOf(client, asn)).find((o) => o.kind === kind && (value === undefined || o.value.includes(value)));
  if (!option) throw new Error(`AS${asn} has no ${kind} option`);
  return option.id;
}

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * Small dn42 registry repositories for specs and the benchmark, written in the
 * real format and committed with the system git.
 */

/** One object's text: `key:` padded so values start at column 21, lines as given. */
export function rpsl(lines: readonly (readonly [string, string] | string)[]): string {
  return lines.map((l) => (typeof l === 'string' ? l : `${`${l[0]}:`.padEnd(20)}${l[1]}`)).join('\n') + '\n';
}

/** A syntactically valid OpenSSH public key blob (`<type> <base64>`) derived from a seed. */
export function sshKey(type: string, seed: string): string {
  const str = (b: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(b.length);
    return Buffer.concat([length, b]);
  };
  const body = createHash('sha256').update(seed).digest();
  return `${type} ${Buffer.concat([str(Buffer.from(type, 'latin1')), str(body)]).toString('base64')}`;
}

/** A 40-hex fingerprint derived from a seed, upper case. */
export function fingerprint(seed: string): string {
  return createHash('sha1').update(seed).digest('hex').toUpperCase();
}

/** A git repository in a temp dir that stands for the upstream registry. */
export class RegistryRepo {
  readonly dir: string;

  constructor(dir?: string) {
    this.dir = dir ?? mkdtempSync(join(tmpdir(), 'dn42-registry-'));
    this.git('init', '--quiet', '--initial-branch=master');
  }

  git(...args: string[]): string {
    return execFileSync('git', args, {
      cwd: this.dir,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'spec',
        GIT_AUTHOR_EMAIL: 'spec@example.net',
        GIT_COMMITTER_NAME: 'spec',
        GIT_COMMITTER_EMAIL: 'spec@example.net',
      },
      maxBuffer: 1 << 28,
    }).toString('utf8');
  }

  /** Writes `data/<class>/<name>`; `/` in the name becomes `_` as in the registry. */
  put(type: string, name: string, text: string): this {
    const path = join(this.dir, 'data', type, name.replace(/\//g, '_'));
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    return this;
  }

  remove(type: string, name: string): this {
    rmSync(join(this.dir, 'data', type, name.replace(/\//g, '_')), { force: true });
    return this;
  }

  /** Commits everything in the tree; returns the commit id. */
  commit(message = 'update'): string {
    this.git('add', '--all');
    this.git('commit', '--quiet', '--allow-empty', '-m', message);
    return this.git('rev-parse', 'HEAD').trim();
  }

  destroy(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export const ALPHA_KEY = sshKey('ssh-ed25519', 'alpha');
export const ALPHA_SK_KEY = sshKey('sk-ssh-ed25519@openssh.com', 'alpha-sk');
export const BETA_RSA_KEY = sshKey('ssh-rsa', 'beta');
export const ALPHA_FPR = fingerprint('alpha-direct');
/** The key-cert's fingerprint ends with its name's 8 hex digits. */
export const KEYCERT_FPR = `${fingerprint('alpha-keycert').slice(0, 32)}F164E04F`;
export const BETA_FPR = fingerprint('beta');

/** `89AB 89AB ...`: how key-certs write fingerprints (groups of four, a double space in the middle). */
export function spaced(fpr: string): string {
  const groups = fpr.match(/.{4}/g)!;
  return `${groups.slice(0, 5).join(' ')}  ${groups.slice(5).join(' ')}`;
}

/**
 * The base registry of the specs: two ASNs sharing maintainers, a key-cert, a
 * role, persons with several, padded or no e-mail addresses, routes with several
 * origins, objects of classes the replica only counts, and a malformed object.
 */
export function writeBaseRegistry(repo: RegistryRepo): RegistryRepo {
  repo
    .put(
      'aut-num',
      'AS4242420001',
      rpsl([
        ['aut-num', 'AS4242420001'],
        ['as-name', 'ALPHA-AS'],
        ['descr', 'Alpha network'],
        '                    spread over two lines',
        '+',
        ['admin-c', 'ALPHA-DN42'],
        ['tech-c', 'ALPHA-DN42'],
        ['tech-c', 'OPS-DN42'],
        ['mnt-by', 'ALPHA-MNT'],
        ['mnt-by', 'BETA-MNT'],
        ['remarks', 'http://example.net: a value with colons'],
        ['source', 'DN42'],
      ]),
    )
    .put(
      'aut-num',
      'AS4242420002',
      rpsl([
        ['aut-num', 'AS4242420002'],
        ['as-name', 'BETA-AS'],
        ['admin-c', 'BETA-DN42'],
        ['tech-c', 'BETA-DN42'],
        ['mnt-by', 'BETA-MNT'],
        ['source', 'DN42'],
      ]),
    )
    .put(
      'aut-num',
      'AS4242420003',
      rpsl([
        ['aut-num', 'AS4242420003'],
        ['admin-c', 'GHOST-DN42'],
        ['mnt-by', 'GHOST-MNT'],
        ['source', 'DN42'],
      ]),
    )
    .put(
      'mntner',
      'ALPHA-MNT',
      rpsl([
        ['mntner', 'ALPHA-MNT'],
        ['admin-c', 'ALPHA-DN42'],
        ['tech-c', 'CAROL-DN42'],
        ['auth', `pgp-fingerprint ${ALPHA_FPR.toLowerCase()}`],
        ['auth', 'PGPKEY-F164E04F'],
        ['auth', `${ALPHA_KEY} alpha@laptop`],
        ['auth', `${ALPHA_SK_KEY} yubikey`],
        ['auth', 'ed25519-pw AAAAsomething'],
        ['auth', 'signify RWQabc'],
        ['auth', 'mntner ALPHA-MNT'],
        ['auth', 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA'],
        ['auth', 'pgp-fingerprint 0123'],
        ['mnt-by', 'ALPHA-MNT'],
        ['source', 'DN42'],
      ]),
    )
    .put(
      'mntner',
      'BETA-MNT',
      rpsl([
        ['mntner', 'BETA-MNT'],
        ['admin-c', 'BETA-DN42'],
        ['auth', `pgp-fingerprint ${BETA_FPR}`],
        ['auth', `${BETA_RSA_KEY}`],
        ['mnt-by', 'BETA-MNT'],
        ['source', 'DN42'],
      ]),
    )
    .put(
      'key-cert',
      'PGPKEY-F164E04F',
      rpsl([
        ['key-cert', 'PGPKEY-F164E04F'],
        ['method', 'PGP'],
        ['owner', 'Alpha <alpha@example.net>'],
        ['fingerpr', spaced(KEYCERT_FPR)],
        ['certif', '-----BEGIN PGP PUBLIC KEY BLOCK-----'],
        ['certif', ''],
        ['certif', 'mDMEZabcdefghijklmnopqrstuvwxyz0123456789'],
        ['certif', '=AbCd'],
        ['certif', '-----END PGP PUBLIC KEY BLOCK-----'],
        ['mnt-by', 'ALPHA-MNT'],
        ['source', 'DN42'],
      ]),
    )
    .put(
      'person',
      'ALPHA-DN42',
      rpsl([
        ['person', 'Alice Alpha'],
        ['e-mail', 'alice@alpha.example   '],
        ['e-mail', 'noc@alpha.example'],
        ['nic-hdl', 'ALPHA-DN42'],
        ['mnt-by', 'ALPHA-MNT'],
        ['source', 'DN42'],
      ]),
    )
    .put(
      'person',
      'CAROL-DN42',
      rpsl([
        ['person', 'Carol'],
        ['e-mail', 'carol@alpha.example'],
        ['nic-hdl', 'CAROL-DN42'],
        ['mnt-by', 'ALPHA-MNT'],
        ['source', 'DN42'],
      ]),
    )
    .put(
      'person',
      'BETA-DN42',
      rpsl([
        ['person', 'Bob Beta'],
        ['nic-hdl', 'BETA-DN42'],
        ['mnt-by', 'BETA-MNT'],
        ['source', 'DN42'],
      ]),
    )
    .put(
      'role',
      'OPS-DN42',
      rpsl([
        ['role', 'Alpha operations'],
        ['admin-c', 'CAROL-DN42'],
        ['nic-hdl', 'OPS-DN42'],
        ['mnt-by', 'ALPHA-MNT'],
        ['source', 'DN42'],
      ]),
    )
    .put(
      'route',
      '172.20.1.0/24',
      rpsl([
        ['route', '172.20.1.0/24'],
        ['origin', 'AS4242420001'],
        ['origin', 'AS4242420002'],
        ['mnt-by', 'ALPHA-MNT'],
        ['source', 'DN42'],
      ]),
    )
    .put(
      'route',
      '172.20.2.0/26',
      rpsl([
        ['route', '172.20.2.0/26'],
        ['origin', 'AS4242420001'],
        ['mnt-by', 'ALPHA-MNT'],
        ['source', 'DN42'],
      ]),
    )
    .put(
      'route6',
      'fd42:1::/48',
      rpsl([
        ['route6', 'fd42:1::/48'],
        ['origin', 'AS4242420001'],
        ['mnt-by', 'ALPHA-MNT'],
        ['source', 'DN42'],
      ]),
    )
    .put(
      'inetnum',
      '172.20.1.0/24',
      rpsl([
        ['inetnum', '172.20.1.0 - 172.20.1.255'],
        ['cidr', '172.20.1.0/24'],
        ['netname', 'ALPHA-NET'],
        ['mnt-by', 'ALPHA-MNT'],
        ['source', 'DN42'],
      ]),
    )
    .put(
      'inet6num',
      'fd42:1::/48',
      rpsl([
        ['inet6num', 'fd42:0001:0000:0000:0000:0000:0000:0000 - fd42:0001:0000:ffff:ffff:ffff:ffff:ffff'],
        ['cidr', 'fd42:1::/48'],
        ['netname', 'ALPHA-NET6'],
        ['mnt-by', 'ALPHA-MNT'],
        ['source', 'DN42'],
      ]),
    )
    .put('person', 'BROKEN-DN42', 'this file is not an object\nperson: Broken\n');
  writeFileSync(join(repo.dir, 'data', 'filter.txt'), '# not an object\n');
  writeFileSync(join(repo.dir, 'README.md'), 'dn42 registry (spec copy)\n');
  return repo;
}

/** Env for a test system whose replica syncs from `source`, with a clone cache in a temp dir of its own. */
export function registryEnv(source: string, extra: Record<string, string> = {}): Record<string, string> {
  return { REGISTRY_SOURCE: source, DATA_DIR: mkdtempSync(join(tmpdir(), 'dn42-replica-')), ...extra };
}

import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Checks a peer configuration (as the portal page shows it, or as
 * `domain/autopeering/peer-config.ts` makes it) with the real tools:
 * `bird -p` for the BIRD snippet, `wg-quick strip` then `wg setconf` for the
 * WireGuard file. Each throws with the tool's output when it refuses.
 */

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(program: string, args: string[], input?: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = execFile(program, args, { timeout: 15_000 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') return reject(error);
      resolve({ code: error ? Number(error.code) : 0, stdout, stderr });
    });
    child.stdin?.on('error', () => {}); // a program that exits without reading its input
    child.stdin?.end(input ?? '');
  });
}

async function inTempDir<T>(body: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'dn42-peercfg-'));
  try {
    return await body(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The minimal BIRD 2 config a self-contained snippet is parsed in: a router id and the device protocol. */
export const BIRD_WRAPPER_HEAD = 'router id 192.0.2.1;\nprotocol device {}\n';

/**
 * `bird -p -c <file>` on the snippet inside {@link BIRD_WRAPPER_HEAD}; resolves
 * with the whole file parsed, throws with BIRD's output otherwise.
 */
export async function checkBirdSnippet(text: string): Promise<string> {
  return inTempDir(async (dir) => {
    const path = join(dir, 'bird.conf');
    const whole = `${BIRD_WRAPPER_HEAD}\n${text}`;
    await writeFile(path, whole);
    const r = await run('bird', ['-p', '-c', path]);
    if (r.code !== 0) throw new Error(`bird -p refused the snippet (exit ${r.code}): ${r.stderr}${r.stdout}\n--- file ---\n${whole}`);
    return whole;
  });
}

/** A fresh private key from `wg genkey`. */
export async function wgGenkey(): Promise<string> {
  const r = await run('wg', ['genkey']);
  if (r.code !== 0) throw new Error(`wg genkey: ${r.stderr}`);
  return r.stdout.trim();
}

/** The public key of a private key (`wg pubkey`). */
export async function wgPubkey(privateKey: string): Promise<string> {
  const r = await run('wg', ['pubkey'], `${privateKey}\n`);
  if (r.code !== 0) throw new Error(`wg pubkey: ${r.stderr}`);
  return r.stdout.trim();
}

export interface WireguardCheck {
  /** The `wg setconf` form `wg-quick strip` made (PrivateKey, ListenPort and the peer). */
  stripped: string;
}

/**
 * The WireGuard file as the peer would finish it (the private-key placeholder
 * replaced by a `wg genkey` key, the listen-port placeholder by `listenPort`),
 * stripped of its wg-quick lines by the real `wg-quick strip <iface>.conf`
 * and parsed by `wg setconf <absent interface>`: a good file gets as far as
 * the kernel (`Unable to modify interface: No such device` or `Protocol not
 * supported`). Throws with the tools' output otherwise.
 */
export async function checkWireguardSnippet(text: string, listenPort = 51820, iface = 'dn42peercheck'): Promise<WireguardCheck> {
  const key = await wgGenkey();
  const filled = text.replace(/<your private key>/g, key).replace(/<your listen port>/g, String(listenPort));
  return inTempDir(async (dir) => {
    const quick = join(dir, `${iface}.conf`);
    await writeFile(quick, filled, { mode: 0o600 });
    const s = await run('wg-quick', ['strip', quick]);
    if (s.code !== 0) throw new Error(`wg-quick strip refused the file (exit ${s.code}): ${s.stderr}\n--- file ---\n${filled}`);
    const plain = join(dir, 'setconf.conf');
    await writeFile(plain, s.stdout, { mode: 0o600 });
    const r = await run('wg', ['setconf', 'dn42absent0', plain]);
    if (!(r.code === 1 && /^Unable to modify interface: (No such device|Protocol not supported)\n?$/.test(r.stderr))) {
      throw new Error(`wg setconf refused the file (exit ${r.code}): ${r.stderr}\n--- stripped ---\n${s.stdout}`);
    }
    return { stripped: s.stdout };
  });
}

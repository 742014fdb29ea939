import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import type { RegistryFile } from '../../domain/registry/snapshot.js';

/**
 * The upstream registry through the system `git`. Arguments go to git as an argv
 * array (never through a shell), and the token travels in the environment as an
 * `http.extraHeader`, so it shows neither in `ps` nor in the cache's git config.
 */

export class UpstreamError extends Error {
  constructor(
    message: string,
    readonly stderr = '',
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}

export interface UpstreamSource {
  /** What git is given: an URL, or an absolute path for a local checkout. */
  location: string;
  /** True for http(s) URLs without credentials of their own: git hosts want a token there. */
  needsToken: boolean;
  /** A local directory that is not a git repository (say `examples/registry`): its files are read as they are. */
  directory?: boolean;
}

/**
 * How a `REGISTRY_SOURCE` is reached. http(s) URLs need a token unless they carry
 * a user and password; ssh, git:// and file:// URLs, scp-like `host:path` and
 * local paths do not (ssh brings its own keys).
 */
export function upstreamSource(source: string): UpstreamSource {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(source)) {
    const url = new URL(source);
    const http = url.protocol === 'http:' || url.protocol === 'https:';
    return { location: source, needsToken: http && !url.password };
  }
  if (/^[^/]+:/.test(source) && !isAbsolute(source)) return { location: source, needsToken: false };
  const location = resolve(source);
  return isPlainDirectory(location) ? { location, needsToken: false, directory: true } : { location, needsToken: false };
}

/** A directory with neither `.git` nor the `HEAD` of a bare repository. */
function isPlainDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory() && !existsSync(join(path, '.git')) && !existsSync(join(path, 'HEAD'));
  } catch {
    return false;
  }
}

export interface GitOptions {
  signal: AbortSignal;
  token?: string;
  /** For an http(s) source: the basic-auth user that goes with the token. */
  tokenUser?: string;
}

/** Runs git, collecting stdout as a Buffer; a non-zero exit or the signal's abort rejects. */
export function git(args: readonly string[], options: GitOptions & { cwd?: string; input?: string; env?: NodeJS.ProcessEnv }): Promise<Buffer> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...options.env,
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: 'true',
    GIT_SSH_COMMAND: process.env.GIT_SSH_COMMAND ?? 'ssh -o BatchMode=yes',
    LC_ALL: 'C',
  };
  if (options.token) {
    const basic = Buffer.from(`${options.tokenUser || 'git'}:${options.token}`).toString('base64');
    Object.assign(env, { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'http.extraHeader', GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}` });
  }
  return new Promise((resolvePromise, reject) => {
    // Its own process group: a Ctrl-C at the server's terminal must not kill a sync round half-way (the
    // shutdown waits for the round instead); the round's signal still ends it.
    const child = spawn('git', args, { cwd: options.cwd, env, signal: options.signal, stdio: ['pipe', 'pipe', 'pipe'], killSignal: 'SIGKILL', detached: true });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => {
      if (err.length < 8192) err += chunk.toString('utf8');
    });
    child.on('error', (e) =>
      reject(
        options.signal.aborted
          ? new UpstreamError('git was stopped: the sync ran out of time', err)
          : new UpstreamError(`git could not run: ${e.message}`, err),
      ),
    );
    child.on('close', (code) => {
      if (code === 0) resolvePromise(Buffer.concat(out));
      else reject(new UpstreamError(`git ${args[0]} exited with ${code ?? 'a signal'}`, err.trim()));
    });
    child.stdin.on('error', () => {});
    child.stdin.end(options.input ?? '');
  });
}

/** The commit the upstream's HEAD points at, without fetching anything. */
export async function remoteHead(source: UpstreamSource, options: GitOptions): Promise<string> {
  const out = (await git(['ls-remote', '--', source.location, 'HEAD'], options)).toString('utf8');
  const match = /^([0-9a-f]{40,64})\tHEAD$/m.exec(out);
  if (!match) throw new UpstreamError('the upstream has no HEAD');
  return match[1];
}

const REF = 'refs/dn42/upstream';

/**
 * Fetches the upstream HEAD (depth 1: the registry's history is large and the
 * replica needs only the tree) into a bare cache repository; returns its commit.
 */
export async function fetchHead(cacheDir: string, source: UpstreamSource, options: GitOptions): Promise<string> {
  await mkdir(cacheDir, { recursive: true });
  await git(['init', '--quiet', '--bare', cacheDir], options);
  const location = source.location.startsWith('/') ? `file://${source.location}` : source.location;
  await git(['-C', cacheDir, 'fetch', '--quiet', '--no-tags', '--depth=1', '--', location, `+HEAD:${REF}`], options);
  return (await git(['-C', cacheDir, 'rev-parse', '--verify', `${REF}^{commit}`], options)).toString('utf8').trim();
}

/**
 * A plain directory as a commit of the cache repository: its `data/` tree is
 * staged into a throwaway index, written as a tree and committed with a fixed
 * author and date, so the same files always give the same commit id (an
 * unchanged directory syncs as "upstream unchanged"). Returns the commit.
 */
export async function snapshotDirectory(cacheDir: string, source: UpstreamSource, options: GitOptions): Promise<string> {
  await mkdir(cacheDir, { recursive: true });
  await git(['init', '--quiet', '--bare', cacheDir], options);
  const index = join(cacheDir, 'dn42-snapshot.index');
  await rm(index, { force: true });
  const fixed = {
    GIT_INDEX_FILE: index,
    GIT_AUTHOR_NAME: 'dn42-control',
    GIT_AUTHOR_EMAIL: 'snapshot@dn42-control.invalid',
    GIT_COMMITTER_NAME: 'dn42-control',
    GIT_COMMITTER_EMAIL: 'snapshot@dn42-control.invalid',
    GIT_AUTHOR_DATE: '1970-01-01T00:00:00Z',
    GIT_COMMITTER_DATE: '1970-01-01T00:00:00Z',
  };
  const withTree = { ...options, env: fixed };
  if (!existsSync(join(source.location, 'data'))) throw new UpstreamError(`${source.location} has no data/ folder: not a dn42 registry`);
  await git(['--git-dir', cacheDir, '--work-tree', source.location, 'add', '--all', '--force', '--', 'data'], { ...withTree, cwd: source.location });
  const tree = (await git(['--git-dir', cacheDir, 'write-tree'], withTree)).toString('utf8').trim();
  const commit = (await git(['--git-dir', cacheDir, 'commit-tree', tree, '-m', 'snapshot of a registry directory'], withTree)).toString('utf8').trim();
  await git(['--git-dir', cacheDir, 'update-ref', REF, commit], options);
  await rm(index, { force: true });
  return commit;
}

/** Every blob under `data/<class>/<name>` of a commit in the cache, read in one `cat-file --batch`. */
export async function readObjects(cacheDir: string, commit: string, options: GitOptions): Promise<RegistryFile[]> {
  const tree = (await git(['-C', cacheDir, 'ls-tree', '-r', '-z', '--full-tree', commit, '--', 'data'], options)).toString('utf8');
  const entries: { path: string; oid: string }[] = [];
  for (const record of tree.split('\0')) {
    // `<mode> SP <type> SP <oid> TAB <path>`
    const match = /^(\d+) (\w+) ([0-9a-f]+)\t(.*)$/s.exec(record);
    if (!match || match[2] !== 'blob' || match[1] === '120000') continue;
    const parts = match[4].split('/');
    if (parts.length !== 3 || parts[0] !== 'data' || parts[1].startsWith('.') || parts[2].startsWith('.')) continue;
    entries.push({ path: match[4], oid: match[3] });
  }
  if (entries.length === 0) return [];
  const batch = await git(['-C', cacheDir, 'cat-file', '--batch'], { ...options, input: entries.map((e) => e.oid).join('\n') + '\n' });
  const files: RegistryFile[] = [];
  let offset = 0;
  for (const entry of entries) {
    const headerEnd = batch.indexOf(0x0a, offset);
    const header = batch.subarray(offset, headerEnd).toString('latin1');
    const [oid, type, size] = header.split(' ');
    if (oid !== entry.oid || type !== 'blob') throw new UpstreamError(`git cat-file answered ${header} for ${entry.oid}`);
    const start = headerEnd + 1;
    const end = start + Number(size);
    files.push({ path: entry.path, text: batch.subarray(start, end).toString('utf8') });
    offset = end + 1;
  }
  return files;
}

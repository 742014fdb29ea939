import { execFileSync } from 'node:child_process';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A stand-in for the packed agent inside test release tarballs: started by the
 * restart stand-in, it does what the real agent does for the health gate
 * (report, then write the marker) unless its version is packed `broken`, where
 * it exits before reporting, like a release that cannot reach the server.
 */
const STAND_IN_AGENT = `import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
const here = new URL('.', import.meta.url);
const version = readFileSync(new URL('./VERSION', here), 'utf8').trim();
if (existsSync(new URL('./BROKEN', here))) process.exit(1);
const dir = process.argv[2] + '/update';
mkdirSync(dir, { recursive: true });
writeFileSync(dir + '/reported-version.json', JSON.stringify({ version, pid: process.pid, at: new Date().toISOString() }));
`;

/** Restart stand-in: runs `<prefix>/current/dist/dn42-agent.mjs <stateDir>` as `systemctl restart` would start the unit. */
export const RESTART_STAND_IN = fileURLToPath(new URL('./restart-agent.mjs', import.meta.url));

/** An npm-style tarball (`package/VERSION`, `package/dist/...`) of the stand-in agent; returns its bytes. */
export async function packStandIn(dir: string, version: string, options: { broken?: boolean; stamped?: string } = {}): Promise<Buffer> {
  const root = join(dir, `src-${version}${options.broken ? '-broken' : ''}`, 'package');
  await mkdir(join(root, 'dist'), { recursive: true });
  await writeFile(join(root, 'VERSION'), `${options.stamped ?? version}\n`);
  await writeFile(join(root, 'dist', 'VERSION'), `${version}\n`);
  await writeFile(join(root, 'dist', 'dn42-agent.mjs'), STAND_IN_AGENT);
  if (options.broken) await writeFile(join(root, 'dist', 'BROKEN'), '');
  const tgz = join(dir, `dn42-agent-${version}-${Date.now()}.tgz`);
  execFileSync('tar', ['-czf', tgz, '-C', join(root, '..'), 'package']);
  return readFile(tgz);
}

/** A prefix with `version` installed and `current` pointing at it, as a node has after its first install. */
export async function installedPrefix(dir: string, version: string): Promise<string> {
  const prefix = join(dir, 'prefix');
  const target = join(prefix, 'versions', version);
  await mkdir(target, { recursive: true });
  execFileSync('tar', ['-xzf', '-', '-C', target, '--strip-components=1'], { input: await packStandIn(dir, version) });
  await symlink(join('versions', version), join(prefix, 'current'));
  return prefix;
}

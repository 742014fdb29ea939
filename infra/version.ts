import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/**
 * The one version of the project: `<major>.<minor>` from package.json and, in a
 * git checkout, the number of commits on HEAD as the patch (`1.0.<commit
 * count>`, the contract's agent versioning, which never goes backwards on one
 * branch). Without git the package.json version as it is. `dn42-control
 * --version` prints it and `npm run agent:pack` stamps it into the agent release.
 */
export function projectVersion(root = ROOT): string {
  const declared = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
  try {
    const count = execFileSync('git', ['rev-list', '--count', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (/^\d+$/.test(count)) return `${declared.split('.').slice(0, 2).join('.')}.${count}`;
  } catch {
    // not a git checkout (an unpacked release): the declared version
  }
  return declared;
}

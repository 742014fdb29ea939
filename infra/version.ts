import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { projectVersionOf } from '../domain/version.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** The declared version of package.json under `root`. */
export function declaredVersion(root = ROOT): string {
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The number of commits on HEAD in `root`, or undefined outside a git checkout. */
export function commitCount(root = ROOT): string | undefined {
  try {
    return execFileSync('git', ['rev-list', '--count', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return undefined; // not a git checkout (an unpacked release): the declared version
  }
}

/** The one version of the project (domain/version.ts); `dn42-control --version` prints it. */
export function projectVersion(root = ROOT): string {
  return projectVersionOf(declaredVersion(root), commitCount(root));
}

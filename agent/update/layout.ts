import { readlink } from 'node:fs/promises';
import { basename, join } from 'node:path';

/**
 * The install layout of the agent on a node:
 *
 *   <prefix>/versions/<x.y.z>/   one directory per installed version (a release's tarballs unpacked)
 *   <prefix>/current -> versions/<x.y.z>   what the systemd unit runs (ExecStart uses current/dist/dn42-agent.mjs)
 *   <prefix>/staging/<x.y.z>/    downloaded, verified files waiting for the installer
 *
 * Switching versions is one symlink rename, so the unit always starts a
 * complete version, and the previous one stays on disk for the health gate's
 * restore.
 */
export const DEFAULT_PREFIX = '/opt/dn42-agent';

export const versionsDir = (prefix: string): string => join(prefix, 'versions');
export const versionDir = (prefix: string, version: string): string => join(prefix, 'versions', version);
export const currentLink = (prefix: string): string => join(prefix, 'current');
export const stagingDir = (prefix: string, version: string): string => join(prefix, 'staging', version);

/** The version `current` points at, or null when the prefix holds no installation (a development checkout). */
export async function currentVersion(prefix: string): Promise<string | null> {
  try {
    return basename(await readlink(currentLink(prefix)));
  } catch {
    return null;
  }
}

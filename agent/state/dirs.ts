import { chmod, mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/**
 * Directories between `/` and the rendered files (the state dir, `nodes/`,
 * `nodes/<id>/`): others may pass through but not list them. BIRD and BIND on
 * Debian drop to their own users (`bird -u bird`, `named -u bind`) and read
 * the rendered files as those users, so a 0700 directory on the way makes
 * every `birdc configure` fail with `Permission denied`. The secrets inside
 * (agent token, WireGuard key, applied state) are files of mode 0600.
 */
export const PASS_THROUGH_DIR_MODE = 0o711;

/** The rendered dir and its folders: BIRD, BIND and operators read them. */
export const PUBLIC_DIR_MODE = 0o755;

/**
 * `mkdir -p` that gives every directory it creates exactly `mode`, whatever
 * the umask (the systemd unit runs with `UMask=0077`, which would turn 0755
 * into 0700). Existing directories are left as they are.
 */
export async function makeDir(path: string, mode: number): Promise<void> {
  const target = resolve(path);
  const first = await mkdir(target, { recursive: true, mode });
  if (first === undefined) return;
  for (let dir = target; ; dir = dirname(dir)) {
    await chmod(dir, mode);
    if (dir === resolve(first) || dir === dirname(dir)) return;
  }
}

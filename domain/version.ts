/**
 * The project's one version rule: `<major>.<minor>` of package.json's version and
 * the number of commits on HEAD as the patch (`1.0.<commit count>`, the
 * contract's agent versioning, which never goes backwards on one branch); the
 * declared version as it is when there is no commit count (an unpacked release).
 * Pure, so the server's `--version` (infra/version.ts) and the agent's release
 * packer (agent/update/pack.ts) share it without the agent importing the server.
 */
export function projectVersionOf(declared: string, commitCount: string | undefined): string {
  const count = commitCount?.trim();
  if (count && /^\d+$/.test(count)) return `${declared.split('.').slice(0, 2).join('.')}.${count}`;
  return declared;
}

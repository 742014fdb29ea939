import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions } from 'esbuild';
import { projectVersionOf } from '../../domain/version.js';

/**
 * `npm run agent:pack [-- --out DIR] [--version x.y.z]`: the agent release
 * tarball `dn42-agent-<version>.tgz` (npm layout, top folder `package/`), to
 * upload with `POST /admin/agent-releases`. esbuild bundles `agent/main.ts`
 * with everything it imports (its own code, the shared schema files under
 * domain/, and the npm dependencies) into `dist/dn42-agent.mjs`, and the
 * installer into `dist/dn42-agent-installer.mjs`, so a node needs only Node.js,
 * no npm install. The version is `1.0.<git commit count>` (document 2,
 * Versioning) and is stamped into `VERSION` and `dist/VERSION` (read by
 * agent/version.ts next to the bundle).
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** `1.0.<number of commits on HEAD>`: grows with every commit, never goes backwards on one branch; the project's one version rule (domain/version.ts). */
export function commitVersion(cwd = ROOT): string {
  const declared = (JSON.parse(readFileSync(join(cwd, 'package.json'), 'utf8')) as { version: string }).version;
  return projectVersionOf(declared, execFileSync('git', ['rev-list', '--count', 'HEAD'], { cwd, encoding: 'utf8' }));
}

/** ESM bundles of CommonJS packages (pino, ws) call `require`; give them one. */
const BANNER = "import { createRequire as __dn42CreateRequire } from 'node:module'; const require = __dn42CreateRequire(import.meta.url);";

export async function pack(outDir: string, version = commitVersion()): Promise<string> {
  const work = await mkdtemp(join(tmpdir(), 'dn42-agent-pack-'));
  try {
    const pkg = join(work, 'package');
    const common: BuildOptions = {
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      banner: { js: BANNER },
      external: ['bufferutil', 'utf-8-validate'],
      logLevel: 'warning',
    };
    await build({ ...common, entryPoints: [join(ROOT, 'agent/main.ts')], outfile: join(pkg, 'dist/dn42-agent.mjs') });
    await build({ ...common, entryPoints: [join(ROOT, 'agent/update/installer-main.ts')], outfile: join(pkg, 'dist/dn42-agent-installer.mjs') });
    await writeFile(join(pkg, 'VERSION'), `${version}\n`);
    await writeFile(join(pkg, 'dist/VERSION'), `${version}\n`);
    await writeFile(
      join(pkg, 'package.json'),
      `${JSON.stringify({ name: 'dn42-agent', version, private: true, type: 'module', bin: { 'dn42-agent': 'dist/dn42-agent.mjs' }, engines: { node: '>=20.19' } }, null, 2)}\n`,
    );
    for (const extra of ['README.md', 'dn42-agent.service']) await copyFile(join(ROOT, 'agent', extra), join(pkg, extra)).catch(() => undefined);
    await mkdir(outDir, { recursive: true });
    const tarball = join(outDir, `dn42-agent-${version}.tgz`);
    execFileSync('tar', ['--owner=0', '--group=0', '--numeric-owner', '-czf', tarball, '-C', work, 'package']);
    return tarball;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const tarball = await pack(resolve(arg('--out') ?? join(ROOT, '.build')), arg('--version'));
  process.stdout.write(`${tarball}\n`);
}

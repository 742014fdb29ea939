import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { ASSET_DIR_NAME, ASSET_PATH, PAGE_BUILD_DIR, PAGE_SOURCE_DIR } from './page-files.js';

/** What a build wrote: the page and its assets with their sizes in bytes. */
export interface PageBuild {
  dir: string;
  files: { name: string; bytes: number }[];
}

/** Browsers the bundle is written for: every one with the WebAuthn JSON methods or close to it. */
const TARGETS = ['chrome111', 'firefox115', 'safari16.4'];

/**
 * Bundles `page/` with esbuild into `dir`: one minified ES module and one style
 * sheet under content-hashed names (cacheable for ever), and `index.html` with
 * the source names replaced by `authorize-page/<hashed name>`, relative, so the
 * page works on any issuer path. The output is written beside `dir` and then
 * moved over it, so a running service never serves half a build.
 */
export async function buildPage(dir = PAGE_BUILD_DIR): Promise<PageBuild> {
  const target = dir.replace(/\/+$/, '');
  const staging = `${target}.${process.pid}-${randomUUID()}.tmp`;
  await rm(staging, { recursive: true, force: true });
  const written = await writeBuild(staging);
  await swapIn(staging, target);
  return { dir: target, files: written };
}

/**
 * Moves `staging` to `target`: the old build is renamed aside first (no window in
 * which a running service finds no index.html but for the two renames), then
 * removed. Another process building at the same time may put its build in
 * between; that one is moved aside too (both builds are of the same sources).
 */
export async function swapIn(staging: string, target: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const aside = `${target}.${process.pid}-${randomUUID()}.old`;
    await rename(target, aside).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
    try {
      await rename(staging, target);
      await rm(aside, { recursive: true, force: true });
      return;
    } catch (err) {
      await rm(aside, { recursive: true, force: true });
      const code = (err as NodeJS.ErrnoException).code;
      if (attempt >= 5 || (code !== 'ENOTEMPTY' && code !== 'EEXIST')) throw err;
    }
  }
}

async function writeBuild(dir: string): Promise<PageBuild['files']> {
  const assets = join(dir, ASSET_DIR_NAME);
  await mkdir(assets, { recursive: true });
  const result = await build({
    absWorkingDir: PAGE_SOURCE_DIR,
    entryPoints: { app: 'app.ts', page: 'page.css' },
    outdir: assets,
    entryNames: '[name]-[hash]',
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: TARGETS,
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });
  let html = await readFile(join(PAGE_SOURCE_DIR, 'index.html'), 'utf8');
  for (const [output, meta] of Object.entries(result.metafile.outputs)) {
    if (!meta.entryPoint) continue;
    const source = basename(meta.entryPoint);
    const reference = source.endsWith('.css') ? `href="${source}"` : `src="${source}"`;
    if (!html.includes(reference)) throw new Error(`index.html does not reference ${source}`);
    html = html.replace(reference, reference.replace(source, `${ASSET_PATH.slice(1)}/${basename(output)}`));
  }
  await writeFile(join(dir, 'index.html'), html);
  const names = ['index.html', ...Object.keys(result.metafile.outputs).map((o) => join(ASSET_DIR_NAME, basename(o)))];
  return Promise.all(names.map(async (name) => ({ name, bytes: (await stat(join(dir, name))).size })));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const built = await buildPage();
  for (const f of built.files) console.log(`${f.name.padEnd(40)} ${(f.bytes / 1024).toFixed(1)} KiB`);
}

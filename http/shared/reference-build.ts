import { randomUUID } from 'node:crypto';
import { copyFile, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { swapIn } from '../identity/page-build.js';
import { REFERENCE_ASSET_DIR_NAME, REFERENCE_ASSET_PATH, REFERENCE_BUILD_DIR, REFERENCE_SOURCE_DIR } from './reference-files.js';

/** What a build wrote, with sizes in bytes. */
export interface ReferenceBuild {
  dir: string;
  files: { name: string; bytes: number }[];
}

/** Browsers Redoc 2 supports, as the other pages. */
const TARGETS = ['chrome111', 'firefox115', 'safari16.4'];

/** The only address Redoc's bundle loads from elsewhere: the Redocly logo of its side menu's credit line. */
const REDOC_CDN_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';

/**
 * Two changes to Redoc's standalone bundle as esbuild reads it. Its UMD wrapper
 * asks CommonJS for a module named `null` (in a browser it reads `window.null`,
 * which is undefined): that gets an empty module. Its credit line's logo is an
 * image from Redocly's CDN: the address is emptied, so the image is never
 * fetched and hides itself (its `onError`); the credit link stays. A Redoc
 * release that changes either fails the build instead of loading from elsewhere.
 */
const redocStandalone: Plugin = {
  name: 'redoc-standalone',
  setup(b) {
    b.onResolve({ filter: /^null$/ }, () => ({ path: 'null', namespace: 'redoc-umd-null' }));
    b.onLoad({ filter: /.*/, namespace: 'redoc-umd-null' }, () => ({ contents: 'module.exports = undefined;', loader: 'js' }));
    b.onLoad({ filter: /redoc[\\/]bundles[\\/]redoc\.standalone\.js$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      if (!source.includes(`require("null")`)) throw new Error('Redoc standalone: the UMD wrapper changed; check the null dependency');
      if (source.split(REDOC_CDN_LOGO).length !== 2) throw new Error(`Redoc standalone: expected ${REDOC_CDN_LOGO} exactly once`);
      const offOrigin = source.replace(REDOC_CDN_LOGO, '').match(/src:"https?:\/\/[^"]+"/);
      if (offOrigin) throw new Error(`Redoc standalone: another off-origin image ${offOrigin[0]}`);
      return { contents: source.replace(REDOC_CDN_LOGO, ''), loader: 'js' };
    });
  },
};

/**
 * Bundles the API reference page (`reference/`: Redoc's standalone bundle and a
 * few lines that load the service's `openapi.json`) with esbuild into `dir`:
 * one script and one style sheet under content-hashed names, and `index.html`
 * referring to them relatively, so one build serves every service's prefix.
 * Written beside `dir` and moved over it, as the authorization page.
 */
export async function buildReference(dir = REFERENCE_BUILD_DIR): Promise<ReferenceBuild> {
  const target = dir.replace(/\/+$/, '');
  const staging = `${target}.${process.pid}-${randomUUID()}.tmp`;
  await rm(staging, { recursive: true, force: true });
  const assets = join(staging, REFERENCE_ASSET_DIR_NAME);
  await mkdir(assets, { recursive: true });
  const result = await build({
    absWorkingDir: REFERENCE_SOURCE_DIR,
    entryPoints: { reference: 'reference.ts', style: 'reference.css' },
    outdir: assets,
    entryNames: '[name]-[hash]',
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: TARGETS,
    // Redoc's licence notices are copied beside the bundle instead (`LICENSES.txt`).
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
    define: { 'process.env.NODE_ENV': '"production"' },
    plugins: [redocStandalone],
  });
  let html = await readFile(join(REFERENCE_SOURCE_DIR, 'index.html'), 'utf8');
  for (const [output, meta] of Object.entries(result.metafile.outputs)) {
    if (!meta.entryPoint) continue;
    const source = basename(meta.entryPoint);
    const reference = source.endsWith('.css') ? `href="${source}"` : `src="${source}"`;
    if (!html.includes(reference)) throw new Error(`index.html does not reference ${source}`);
    html = html.replace(reference, reference.replace(source, `${REFERENCE_ASSET_PATH.slice(1)}/${basename(output)}`));
  }
  await writeFile(join(staging, 'index.html'), html);
  await copyFile(fileURLToPath(import.meta.resolve('redoc/bundles/redoc.standalone.js.LICENSE.txt')), join(assets, 'LICENSES.txt'));
  const names = [
    'index.html',
    ...Object.keys(result.metafile.outputs).map((o) => join(REFERENCE_ASSET_DIR_NAME, basename(o))),
    join(REFERENCE_ASSET_DIR_NAME, 'LICENSES.txt'),
  ];
  const files = await Promise.all(names.map(async (name) => ({ name, bytes: (await stat(join(staging, name))).size })));
  await swapIn(staging, target);
  return { dir: target, files };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const built = await buildReference();
  for (const f of built.files) console.log(`${f.name.padEnd(40)} ${(f.bytes / 1024).toFixed(1)} KiB`);
}

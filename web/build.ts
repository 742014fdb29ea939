import { createHash, randomUUID } from 'node:crypto';
import { copyFile, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { build as esbuild, type BuildOptions, type Plugin } from 'esbuild';
import type { Feature, FeatureCollection, Geometry, Position } from 'geojson';
import jpeg from 'jpeg-js';
import { feature } from 'topojson-client';
import type { GeometryCollection, Topology } from 'topojson-specification';
import { build as vite } from 'vite';
import {
  APPS,
  AUTHORIZE_ASSET_DIR_NAME,
  AUTHORIZE_ASSET_PATH,
  AUTHORIZE_BUILD_DIR,
  AUTHORIZE_SOURCE_DIR,
  LAND_FILE,
  REFERENCE_ASSET_DIR_NAME,
  REFERENCE_ASSET_PATH,
  REFERENCE_BUILD_DIR,
  REFERENCE_SOURCE_DIR,
  SITE_BUILD_DIR,
  SITE_FILES,
  SITE_PHOTO_CACHE_DIR,
  SITE_SOURCE_DIR,
  WEB_BUILD_DIR,
  WEB_SOURCE_DIR,
} from './files.js';
import type { AppName } from './files.js';
import { renderCanyon } from './site/photo.js';

/**
 * The one build of every browser page: the authorization page, the home site's
 * files and the API reference page (esbuild), the console and the portal (Vite,
 * Svelte 5). Each is written into a staging folder beside its target and then
 * swapped in (`staged`), so a running service never serves half a build.
 * `node --import tsx web/build.ts [authorize|site|reference|console|portal...]`
 * builds the ones named, or all five.
 */

/** What a build wrote: its folder and its files (paths inside it) with their sizes in bytes. */
export interface Built {
  dir: string;
  files: { name: string; bytes: number }[];
}
export interface WebBuild extends Built {
  app: AppName;
}

/** Browsers every bundle is written for: every one with the WebAuthn JSON methods or close to it (custom elements, `Intl.DisplayNames`). */
const TARGETS = ['chrome111', 'firefox115', 'safari16.4'];

/** The authorization page (`web/authorize/`): one ES module and one style sheet by content-hashed name, `index.html` referring to them. */
export function buildPage(dir = AUTHORIZE_BUILD_DIR): Promise<Built> {
  return staged(dir, (staging) =>
    bundlePage(staging, {
      source: AUTHORIZE_SOURCE_DIR,
      entries: { app: 'app.ts', page: 'page.css' },
      assetDir: AUTHORIZE_ASSET_DIR_NAME,
      assetPath: AUTHORIZE_ASSET_PATH,
    }),
  );
}

/**
 * The API reference page (`web/reference/`: Redoc's standalone bundle and a few
 * lines that load the service's `openapi.json`): one build serves every
 * service's prefix, as its references are relative. Redoc's licence notices are
 * copied beside the bundle (`LICENSES.txt`).
 */
export function buildReference(dir = REFERENCE_BUILD_DIR): Promise<Built> {
  return staged(dir, async (staging) => {
    await bundlePage(staging, {
      source: REFERENCE_SOURCE_DIR,
      entries: { reference: 'reference.ts', style: 'reference.css' },
      assetDir: REFERENCE_ASSET_DIR_NAME,
      assetPath: REFERENCE_ASSET_PATH,
      options: { define: { 'process.env.NODE_ENV': '"production"' }, plugins: [redocStandalone] },
    });
    const licences = fileURLToPath(import.meta.resolve('redoc/bundles/redoc.standalone.js.LICENSE.txt'));
    await copyFile(licences, join(staging, REFERENCE_ASSET_DIR_NAME, 'LICENSES.txt'));
  });
}

/**
 * The home site's static files (`web/site/`): the map component bundle, the
 * style sheet the bake inlines, the land outline, the icon and the photo. The
 * page itself is baked at start (it carries a snapshot of the public map).
 */
export function buildSite(dir = SITE_BUILD_DIR): Promise<Built> {
  return staged(dir, async (staging) => {
    await esbuild({
      ...ESBUILD_DEFAULTS,
      absWorkingDir: SITE_SOURCE_DIR,
      entryPoints: { fleet: 'fleet.ts', page: 'page.css' },
      outdir: staging,
      // The style sheet's photo is a path of the site, not a file to bundle.
      external: ['/canyonlands.jpg'],
    });
    await writeFile(join(staging, SITE_FILES.land), JSON.stringify(await landOutline()));
    await copyFile(join(SITE_SOURCE_DIR, SITE_FILES.icon), join(staging, SITE_FILES.icon));
    await copyFile(await photo(), join(staging, SITE_FILES.photo));
  });
}

/**
 * The console and the portal (`web/<app>/`, sharing `web/shared/`), each with
 * Vite into `.build/web/<app>/`: `index.html`, content-hashed scripts and styles
 * under `assets/` (cacheable for ever) and the land outline for the map. Asset
 * references are relative (`base: './'`); the server adds `<base href>` for the
 * path it serves the app under. The pages' API types (`npm run build:web-api`)
 * are types only: Vite does not read them.
 */
export async function buildWeb(apps: readonly AppName[] = Object.keys(APPS) as AppName[], root = WEB_BUILD_DIR): Promise<WebBuild[]> {
  const land = JSON.stringify(await landOutline());
  const built: WebBuild[] = [];
  for (const app of apps) {
    const result = await staged(join(root, app), async (staging) => {
      await vite({
        configFile: false,
        root: join(WEB_SOURCE_DIR, app),
        base: './',
        logLevel: 'warn',
        plugins: [svelte()],
        build: { outDir: staging, emptyOutDir: true, target: TARGETS, assetsDir: 'assets', reportCompressedSize: false, chunkSizeWarningLimit: 400 },
      });
      await writeFile(join(staging, LAND_FILE), land);
    });
    built.push({ app, ...result });
  }
  return built;
}

/** Every build by the name `web/build.ts` takes on its command line. */
export const BUILDS = {
  authorize: () => buildPage(),
  site: () => buildSite(),
  reference: () => buildReference(),
  console: async () => (await buildWeb(['console']))[0],
  portal: async () => (await buildWeb(['portal']))[0],
} as const satisfies Record<string, () => Promise<Built>>;

// ---- the staged swap ----

/**
 * Runs `write` into a fresh staging folder beside `dir`, lists what it wrote
 * and swaps it in over `dir`.
 */
export async function staged(dir: string, write: (staging: string) => Promise<void>): Promise<Built> {
  const target = dir.replace(/\/+$/, '');
  const staging = `${target}.${process.pid}-${randomUUID()}.tmp`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  try {
    await write(staging);
    const files = await listFiles(staging);
    await swapIn(staging, target);
    return { dir: target, files };
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    throw err;
  }
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

async function listFiles(dir: string, prefix = ''): Promise<Built['files']> {
  const out: Built['files'] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const name = prefix + entry.name;
    if (entry.isDirectory()) out.push(...(await listFiles(join(dir, entry.name), `${name}/`)));
    else out.push({ name, bytes: (await stat(join(dir, entry.name))).size });
  }
  return out;
}

// ---- esbuild ----

const ESBUILD_DEFAULTS = {
  bundle: true,
  minify: true,
  format: 'esm',
  platform: 'browser',
  target: TARGETS,
  // Licence notices, where a bundle needs them, are copied beside it instead.
  legalComments: 'none',
  logLevel: 'warning',
} as const satisfies BuildOptions;

/**
 * Bundles a page's entries into `<staging>/<assetDir>/` under content-hashed
 * names (cacheable for ever) and writes its `index.html` with each source name
 * replaced by `<assetPath>/<hashed name>`, relative, so the page works under
 * any path it is served at.
 */
async function bundlePage(
  staging: string,
  page: { source: string; entries: Record<string, string>; assetDir: string; assetPath: string; options?: BuildOptions },
): Promise<void> {
  const result = await esbuild({
    ...ESBUILD_DEFAULTS,
    ...page.options,
    absWorkingDir: page.source,
    entryPoints: page.entries,
    outdir: join(staging, page.assetDir),
    entryNames: '[name]-[hash]',
    metafile: true,
  });
  let html = await readFile(join(page.source, 'index.html'), 'utf8');
  for (const [output, meta] of Object.entries(result.metafile.outputs)) {
    if (!meta.entryPoint) continue;
    const source = basename(meta.entryPoint);
    const reference = source.endsWith('.css') ? `href="${source}"` : `src="${source}"`;
    if (!html.includes(reference)) throw new Error(`index.html does not reference ${source}`);
    html = html.replace(reference, reference.replace(source, `${page.assetPath.slice(1)}/${basename(output)}`));
  }
  await writeFile(join(staging, 'index.html'), html);
}

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

// ---- the map's land and the site's photo ----

/** Natural Earth 1:110m land (world-atlas) as GeoJSON, coordinates rounded to 0.01° (about 1 km, far below a pixel of the map). */
export async function landOutline(): Promise<FeatureCollection<Geometry>> {
  const topology = JSON.parse(await readFile(new URL(import.meta.resolve('world-atlas/land-110m.json')), 'utf8')) as Topology<{ land: GeometryCollection }>;
  const land = feature(topology, topology.objects.land) as FeatureCollection<Geometry> | Feature<Geometry>;
  const features = land.type === 'FeatureCollection' ? land.features : [land];
  return { type: 'FeatureCollection', features: features.map((f) => ({ type: 'Feature', properties: {}, geometry: roundGeometry(f.geometry) })) };
}

const r2 = (x: number) => Math.round(x * 100) / 100;

/** Rounds every position and drops the repeats that rounding makes (a ring keeps its closing point). */
function roundRing(ring: Position[]): Position[] {
  const out: Position[] = [];
  for (const [lon, lat] of ring) {
    const p = [r2(lon), r2(lat)];
    const last = out[out.length - 1];
    if (!last || last[0] !== p[0] || last[1] !== p[1]) out.push(p);
  }
  return out;
}

function roundGeometry(g: Geometry): Geometry {
  switch (g.type) {
    case 'Polygon':
      return { type: 'Polygon', coordinates: g.coordinates.map(roundRing).filter((r) => r.length >= 4) };
    case 'MultiPolygon':
      return {
        type: 'MultiPolygon',
        coordinates: g.coordinates.map((poly) => poly.map(roundRing).filter((r) => r.length >= 4)).filter((poly) => poly.length > 0),
      };
    default:
      throw new Error(`land outline: unexpected ${g.type}`);
  }
}

/** The photo, rendered once per version of its generator (`web/site/photo.ts`) and kept in a cache beside the build. */
async function photo(): Promise<string> {
  const source = await readFile(new URL('./site/photo.ts', import.meta.url));
  const cached = join(SITE_PHOTO_CACHE_DIR, `canyonlands-${createHash('sha256').update(source).digest('hex').slice(0, 16)}.jpg`);
  try {
    await stat(cached);
    return cached;
  } catch {
    // not rendered yet
  }
  await mkdir(SITE_PHOTO_CACHE_DIR, { recursive: true });
  const encoded = jpeg.encode(renderCanyon(), 80).data;
  const temporary = `${cached}.${process.pid}-${randomUUID()}.tmp`;
  await writeFile(temporary, encoded);
  await rename(temporary, cached);
  return cached;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const names = process.argv.slice(2);
  const unknown = names.filter((n) => !(n in BUILDS));
  if (unknown.length > 0) {
    console.error(`web/build.ts: no build named ${unknown.join(', ')} (known: ${Object.keys(BUILDS).join(', ')})`);
    process.exit(2);
  }
  for (const name of (names.length > 0 ? names : Object.keys(BUILDS)) as (keyof typeof BUILDS)[]) {
    const b = await BUILDS[name]();
    const total = b.files.reduce((sum, f) => sum + f.bytes, 0);
    console.log(`${name}: ${b.files.length} files, ${(total / 1024).toFixed(0)} KiB in ${b.dir}`);
  }
}

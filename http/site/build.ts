import { createHash, randomUUID } from 'node:crypto';
import { copyFile, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import jpeg from 'jpeg-js';
import { feature } from 'topojson-client';
import type { Topology, GeometryCollection } from 'topojson-specification';
import type { Feature, FeatureCollection, Geometry, Position } from 'geojson';
import { swapIn } from '../identity/page-build.js';
import { BUILT, PHOTO_CACHE_DIR, SITE_BUILD_DIR, SITE_SOURCE_DIR } from './files.js';
import { renderCanyon } from './photo.js';

/** What a build wrote, with sizes in bytes. */
export interface SiteBuild {
  dir: string;
  files: { name: string; bytes: number }[];
}

/** Browsers the bundle is written for (custom elements, `Intl.DisplayNames`, optional chaining). */
const TARGETS = ['chrome111', 'firefox115', 'safari16.4'];

/**
 * Builds the home site's static files into `dir` (`.build/site/`): the map
 * component bundle, the style sheet the bake inlines, the land outline, the
 * icon and the photo. Written beside `dir` and moved over it, so a running
 * service never reads half a build. The page itself is baked at start (it
 * carries a snapshot of the public map), from these files.
 */
export async function buildSite(dir = SITE_BUILD_DIR): Promise<SiteBuild> {
  const target = dir.replace(/\/+$/, '');
  const staging = `${target}.${process.pid}-${randomUUID()}.tmp`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  await bundle(staging);
  await writeFile(join(staging, BUILT.land), JSON.stringify(await landOutline()));
  await copyFile(join(SITE_SOURCE_DIR, BUILT.icon), join(staging, BUILT.icon));
  await copyFile(await photo(), join(staging, BUILT.photo));
  const names = Object.values(BUILT);
  const files = await Promise.all(names.map(async (name) => ({ name, bytes: (await stat(join(staging, name))).size })));
  await swapIn(staging, target);
  return { dir: target, files };
}

async function bundle(dir: string): Promise<void> {
  await build({
    absWorkingDir: SITE_SOURCE_DIR,
    entryPoints: { fleet: 'fleet.ts', page: 'page.css' },
    outdir: dir,
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: TARGETS,
    legalComments: 'none',
    // The style sheet's photo is a path of the site, not a file to bundle.
    external: ['/canyonlands.jpg'],
    logLevel: 'warning',
  });
}

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

/** The photo, rendered once per version of its generator and kept in a cache beside the build. */
async function photo(): Promise<string> {
  const source = await readFile(new URL('./photo.ts', import.meta.url));
  const cached = join(PHOTO_CACHE_DIR, `canyonlands-${createHash('sha256').update(source).digest('hex').slice(0, 16)}.jpg`);
  try {
    await stat(cached);
    return cached;
  } catch {
    // not rendered yet
  }
  await mkdir(PHOTO_CACHE_DIR, { recursive: true });
  const encoded = jpeg.encode(renderCanyon(), 80).data;
  const temporary = `${cached}.${process.pid}-${randomUUID()}.tmp`;
  await writeFile(temporary, encoded);
  await rename(temporary, cached);
  return cached;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const built = await buildSite();
  for (const f of built.files) console.log(`${f.name.padEnd(40)} ${(f.bytes / 1024).toFixed(1)} KiB`);
}

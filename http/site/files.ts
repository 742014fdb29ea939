import { fileURLToPath } from 'node:url';

/**
 * Where the home site lives: its browser sources (`page/`), the build output
 * (`.build/site/`, gitignored, written by `npm run build:site`) and the names of
 * the built files. Kept apart from the build script so the service reads these
 * without loading esbuild (a development dependency).
 */
export const SITE_SOURCE_DIR = fileURLToPath(new URL('./page/', import.meta.url));
export const SITE_BUILD_DIR = fileURLToPath(new URL('../../.build/site/', import.meta.url));
/** Rendered photos by the hash of their generator, so a build renders the picture only when `photo.ts` changed. */
export const PHOTO_CACHE_DIR = fileURLToPath(new URL('../../.build/site-photo-cache/', import.meta.url));

/** The built files: served under `/<name>` except `page.css`, which the bake inlines into the page. */
export const BUILT = {
  script: 'fleet.js',
  style: 'page.css',
  land: 'world-land.geojson',
  icon: 'favicon.svg',
  photo: 'canyonlands.jpg',
} as const;

export const SITE_NOT_BUILT = 'the home site is not built (run npm run build:site)';

import { fileURLToPath } from 'node:url';

/**
 * Where the browser builds live: their sources under `web/`, their output under
 * `.build/` (gitignored, written by `web/build.ts`), the names and URL paths the
 * services serve them under. Kept apart from the build module so the services
 * read these without loading esbuild or Vite (development dependencies).
 */
export const WEB_SOURCE_DIR = fileURLToPath(new URL('./', import.meta.url));
const BUILD_ROOT = fileURLToPath(new URL('../.build/', import.meta.url));

/** The authorization page (`web/authorize/`, `npm run build:page`) of the identity service. */
export const AUTHORIZE_SOURCE_DIR = `${WEB_SOURCE_DIR}authorize/`;
export const AUTHORIZE_BUILD_DIR = `${BUILD_ROOT}authorize-page/`;
/** The page's own URL path (document 1: `GET /authorize`). */
export const AUTHORIZE_PATH = '/authorize';
/** Assets by content-hashed name, referenced from the page relatively (`authorize-page/app-<hash>.js`). */
export const AUTHORIZE_ASSET_PATH = '/authorize-page';
export const AUTHORIZE_ASSET_DIR_NAME = 'assets';

/** The API reference page (`web/reference/`, `npm run build:reference`), under each service's prefix. */
export const REFERENCE_SOURCE_DIR = `${WEB_SOURCE_DIR}reference/`;
export const REFERENCE_BUILD_DIR = `${BUILD_ROOT}api-reference/`;
/** The page, under each service's prefix: `/control/v1/docs`, `/api/v1/docs`, `/registry/v1/docs`. */
export const REFERENCE_PATH = '/docs';
/** Its assets by content-hashed name, referenced from the page relatively (`docs/reference-<hash>.js`). */
export const REFERENCE_ASSET_PATH = '/docs';
export const REFERENCE_ASSET_DIR_NAME = 'assets';

/** The home site's static files (`web/site/`, `npm run build:site`); the page itself is baked at start. */
export const SITE_SOURCE_DIR = `${WEB_SOURCE_DIR}site/`;
export const SITE_BUILD_DIR = `${BUILD_ROOT}site/`;
/** Rendered photos by the hash of their generator, so a build renders the picture only when `web/site/photo.ts` changed. */
export const SITE_PHOTO_CACHE_DIR = `${BUILD_ROOT}site-photo-cache/`;
/** The built files: served under `/<name>` except `page.css`, which the bake inlines into the page. */
export const SITE_FILES = {
  script: 'fleet.js',
  style: 'page.css',
  land: 'world-land.geojson',
  icon: 'favicon.svg',
  photo: 'canyonlands.jpg',
} as const;
export const SITE_NOT_BUILT = 'the home site is not built (run npm run build:site)';

/** The single-page apps (`web/<app>/`, sharing `web/shared/`; `npm run build:web`) and the path the control server serves each under. */
export const WEB_BUILD_DIR = `${BUILD_ROOT}web/`;
export const APPS = {
  console: '/console',
  portal: '/portal',
} as const;
export type AppName = keyof typeof APPS;

/** The land outline the map component draws, beside each app's `index.html`. */
export const LAND_FILE = 'world-land.geojson';

export const notBuilt = (app: AppName) => `the ${app} pages are not built (run npm run build:web)`;

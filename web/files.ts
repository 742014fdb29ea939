import { fileURLToPath } from 'node:url';

/**
 * Where the browser apps live: their sources (`web/<app>/`, sharing `web/shared/`)
 * and the build output (`.build/web/<app>/`, gitignored, written by
 * `npm run build:web`). Kept apart from the build script so the control server
 * reads these without loading Vite (a development dependency).
 */
export const WEB_SOURCE_DIR = fileURLToPath(new URL('./', import.meta.url));
export const WEB_BUILD_DIR = fileURLToPath(new URL('../.build/web/', import.meta.url));

/** The single-page apps and the path the control server serves each under. */
export const APPS = {
  console: '/console',
  portal: '/portal',
} as const;
export type AppName = keyof typeof APPS;

/** The land outline the map component draws, beside each app's `index.html`. */
export const LAND_FILE = 'world-land.geojson';

export const notBuilt = (app: AppName) => `the ${app} pages are not built (run npm run build:web)`;

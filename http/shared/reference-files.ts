import { fileURLToPath } from 'node:url';

/**
 * Where the API reference page lives: its sources (`reference/`), the build
 * output (`.build/api-reference/`, gitignored, written by `npm run build:reference`)
 * and its URL paths under a service prefix. Kept apart from the build script so
 * the services read these without loading esbuild (a development dependency).
 */
export const REFERENCE_SOURCE_DIR = fileURLToPath(new URL('./reference/', import.meta.url));
export const REFERENCE_BUILD_DIR = fileURLToPath(new URL('../../.build/api-reference/', import.meta.url));
/** The page, under each service's prefix: `/control/v1/docs`, `/api/v1/docs`, `/registry/v1/docs`. */
export const REFERENCE_PATH = '/docs';
/** Its assets by content-hashed name, referenced from the page relatively (`docs/reference-<hash>.js`). */
export const REFERENCE_ASSET_PATH = '/docs';
export const REFERENCE_ASSET_DIR_NAME = 'assets';

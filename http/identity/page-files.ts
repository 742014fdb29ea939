import { fileURLToPath } from 'node:url';

/**
 * Where the authorization page lives: its sources (`page/`), the build output
 * (`.build/authorize-page/`, gitignored, written by `npm run build:page`) and the
 * URL path of its assets. Kept apart from the build script so the service reads
 * these without loading esbuild (a development dependency).
 */
export const PAGE_SOURCE_DIR = fileURLToPath(new URL('./page/', import.meta.url));
export const PAGE_BUILD_DIR = fileURLToPath(new URL('../../.build/authorize-page/', import.meta.url));
/** The page's own URL path (document 1: `GET /authorize`). */
export const PAGE_PATH = '/authorize';
/** Assets by content-hashed name, referenced from the page relatively (`authorize-page/app-<hash>.js`). */
export const ASSET_PATH = '/authorize-page';
export const ASSET_DIR_NAME = 'assets';

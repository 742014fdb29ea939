import { randomUUID } from 'node:crypto';
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { build } from 'vite';
import { swapIn } from '../http/identity/page-build.js';
import { landOutline } from '../http/site/build.js';
import { APPS, LAND_FILE, WEB_BUILD_DIR, WEB_SOURCE_DIR, type AppName } from './files.js';
import { writeApiTypes } from './openapi.js';

/** Browsers the bundles are written for (as the authorization page's). */
const TARGETS = ['chrome111', 'firefox115', 'safari16.4'];

export interface WebBuild {
  app: AppName;
  dir: string;
  files: { name: string; bytes: number }[];
}

/**
 * Writes the control server's API types first (`web/openapi.ts`: the pages'
 * typed client reads them), then builds each app with Vite (Svelte 5) into `.build/web/<app>/`: `index.html`,
 * content-hashed scripts and styles under `assets/` (cacheable for ever) and the
 * land outline for the map. Asset references are relative (`base: './'`); the
 * server adds `<base href>` for the path it serves the app under. Each app is
 * written beside its target and moved over it, so a running server never serves
 * half a build.
 */
export async function buildWeb(apps: readonly AppName[] = Object.keys(APPS) as AppName[], root = WEB_BUILD_DIR): Promise<WebBuild[]> {
  await writeApiTypes();
  await mkdir(root, { recursive: true });
  const land = JSON.stringify(await landOutline());
  const built: WebBuild[] = [];
  for (const app of apps) {
    const target = join(root, app);
    const staging = `${target}.${process.pid}-${randomUUID()}.tmp`;
    await build({
      configFile: false,
      root: join(WEB_SOURCE_DIR, app),
      base: './',
      logLevel: 'warn',
      plugins: [svelte()],
      build: { outDir: staging, emptyOutDir: true, target: TARGETS, assetsDir: 'assets', reportCompressedSize: false, chunkSizeWarningLimit: 400 },
    });
    await writeFile(join(staging, LAND_FILE), land);
    await swapIn(staging, target);
    built.push({ app, dir: target, files: await listFiles(target) });
  }
  return built;
}

async function listFiles(dir: string, prefix = ''): Promise<{ name: string; bytes: number }[]> {
  const out: { name: string; bytes: number }[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const name = prefix + entry.name;
    if (entry.isDirectory()) out.push(...(await listFiles(join(dir, entry.name), `${name}/`)));
    else out.push({ name, bytes: (await stat(join(dir, entry.name))).size });
  }
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const apps = process.argv.slice(2) as AppName[];
  for (const b of await buildWeb(apps.length ? apps : undefined)) {
    const total = b.files.reduce((sum, f) => sum + f.bytes, 0);
    console.log(`${b.app}: ${b.files.length} files, ${(total / 1024).toFixed(0)} KiB in ${b.dir}`);
  }
}

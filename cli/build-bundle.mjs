// `npm run build:cli`: bundles the command tree of `dn42-control`
// (cli/main.ts and what it imports statically: commander's definitions,
// the configuration table, the version) into .build/cli/main.mjs, so that
// `--help`, `--version` and argument errors run without a TypeScript loader
// (tsx's costs most of the 0.7 s the command took). What the actions import
// dynamically (the services, the database, oidc-provider) is left out of the
// bundle and loaded from the TypeScript sources through tsx, which main.ts
// registers before the first action. cli/bin.mjs uses the bundle only while
// it is newer than every source in it (cli/bundle.mjs).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { BUNDLE, BUNDLE_INPUTS, ROOT } from './bundle.mjs';

const OUT_DIR = dirname(BUNDLE);
const posix = (path) => path.split('\\').join('/');

/** A relative import path from the bundle to a file: `../../cli/system.ts`. */
const fromBundle = (file) => {
  const path = posix(relative(OUT_DIR, file));
  return path.startsWith('.') ? path : `./${path}`;
};

/**
 * Dynamic imports stay imports of the TypeScript sources (`./system.js` of
 * main.ts becomes `../../cli/system.ts` of the bundle); and `import.meta.url`
 * in a bundled source keeps meaning that source's URL (config.ts and version.ts
 * find the project directory from it).
 */
const sourcesStayPut = {
  name: 'sources-stay-put',
  setup(b) {
    b.onResolve({ filter: /^\.\.?\//, namespace: 'file' }, (args) => {
      if (args.kind !== 'dynamic-import') return undefined;
      return { path: fromBundle(resolve(args.resolveDir, args.path.replace(/\.js$/, '.ts'))), external: true };
    });
    b.onLoad({ filter: /\.ts$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      const own = `new URL(${JSON.stringify(fromBundle(args.path))}, import.meta.url).href`;
      return { contents: text.replaceAll('import.meta.url', own), loader: 'ts' };
    });
  },
};

export async function buildCliBundle() {
  mkdirSync(OUT_DIR, { recursive: true });
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: [`${ROOT}cli/main.ts`],
    outfile: BUNDLE,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    metafile: true,
    define: { DN42_CLI_BUNDLE: 'true' },
    logLevel: 'warning',
    banner: { js: '// Built by cli/build-bundle.mjs from cli/main.ts; do not edit.' },
    plugins: [sourcesStayPut],
  });
  const inputs = Object.keys(result.metafile.inputs).map((path) => posix(relative(ROOT, resolve(ROOT, path))));
  writeFileSync(BUNDLE_INPUTS, `${JSON.stringify(inputs.sort(), null, 2)}\n`);
  return { bundle: BUNDLE, inputs };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { bundle, inputs } = await buildCliBundle();
  process.stdout.write(`${posix(relative(ROOT, bundle))}: from ${inputs.length} sources\n`);
}

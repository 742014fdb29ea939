#!/usr/bin/env -S node --max-semi-space-size=64
// Entry point of `dn42-control`. The command tree runs from the prebuilt bundle
// (`npm run build:cli`, made by `npm ci`, `npm start` and `npm test`) while it is
// newer than its sources: `--help` and `--version` then load no TypeScript
// loader, and the actions register tsx before they import the services. Without
// a fresh bundle everything runs from the TypeScript sources through tsx.
//
// --max-semi-space-size: a young generation of up to 64 MB a half (V8's default is 16), so the
// documents a publishing write builds and sends die young instead of being promoted and
// marked in an old generation that holds the fold caches (bench fleet-scale: garbage
// collection took half the share of the server's busy time); also in `npm start` and `npm run
// bench` (whose server runs in its process).
import { freshBundle } from './bundle.mjs';

const bundle = freshBundle();
if (bundle) {
  await import(bundle);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./main.ts');
}

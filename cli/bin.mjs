#!/usr/bin/env node
// Entry point of `dn42-control`. The command tree runs from the prebuilt bundle
// (`npm run build:cli`, made by `npm ci`, `npm start` and `npm test`) while it is
// newer than its sources: `--help` and `--version` then load no TypeScript
// loader, and the actions register tsx before they import the services. Without
// a fresh bundle everything runs from the TypeScript sources through tsx.
import { freshBundle } from './bundle.mjs';

const bundle = freshBundle();
if (bundle) {
  await import(bundle);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./main.ts');
}

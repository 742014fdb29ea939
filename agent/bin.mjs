#!/usr/bin/env node
// Entry point of `dn42-agent` in the source tree: TypeScript sources run through tsx's loader.
// A release runs the esbuild bundle of main.ts instead (agent/update/pack.ts).
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');

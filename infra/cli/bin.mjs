#!/usr/bin/env node
// Entry point of `dn42-control`: TypeScript sources run through tsx's loader.
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');

// Where the prebuilt command line lives and whether it may be used (plain
// JavaScript: read before any TypeScript loader is registered). See
// cli/build-bundle.mjs.
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The project directory. */
export const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** The bundle of cli/main.ts and the sources it was built from (paths from ROOT). */
export const BUNDLE = `${ROOT}.build/cli/main.mjs`;
export const BUNDLE_INPUTS = `${ROOT}.build/cli/inputs.json`;

/**
 * The bundle's path when it is newer than every source it was built from, else
 * undefined (never built, or a source edited since: running it would run old code).
 */
export function freshBundle() {
  try {
    const built = statSync(BUNDLE).mtimeMs;
    const inputs = JSON.parse(readFileSync(BUNDLE_INPUTS, 'utf8'));
    return inputs.every((path) => statSync(`${ROOT}${path}`).mtimeMs <= built) ? BUNDLE : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Agent releases: which versions and file names are acceptable, how versions
 * compare, and how much an upload may carry. Names are checked against an
 * allow-list, never sanitised: anything else is refused (422), so no path
 * (`../`, `/`, `\`, NUL, URL escapes) can reach storage or a download URL.
 */

import { Validation } from '../errors.js';

/** `x.y.z`, each part decimal; at most 9 digits so every part is an exact JavaScript number. */
export const VERSION = /^(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})$/;

/**
 * A release file: Python wheels (`*.whl`, the contract's wording) and npm
 * tarballs (`*.tgz`, the node agent is a TypeScript package). Letters, digits,
 * `.`, `_`, `+`, `-`; starts with a letter or digit; no `..`; at most 200 characters.
 */
export const FILE_NAME = /^(?!.*\.\.)[A-Za-z0-9][A-Za-z0-9._+-]{0,195}\.(whl|tgz)$/;

/** Upload limits (the contract leaves them open; documented in docs/decisions.md). */
export const UPLOAD_LIMITS = {
  /** Bytes of one file. */
  file_bytes: 32 * 1024 * 1024,
  /** Bytes of all files of one upload together. */
  total_bytes: 64 * 1024 * 1024,
  /** Files per release (the agent's packages update together). */
  files: 16,
} as const;

export const isVersion = (value: string): boolean => VERSION.test(value);
export const isReleaseFileName = (value: string): boolean => FILE_NAME.test(value);

/** The refused value as quoted in a detail, cut so that a long one cannot swell the answer. */
const quoted = (value: string): string => JSON.stringify(value.length > 240 ? `${value.slice(0, 240)}…` : value);

/** Throws `invalid version: "<v>" must match x.y.z` (422) unless `version` is `x.y.z`; `where` is the error's loc. */
export function checkVersion(version: string, where: (string | number)[] = ['body', 'version']): void {
  if (!isVersion(version))
    throw new Validation(`invalid version: ${quoted(version)} must match x.y.z`, [{ loc: where, msg: 'must match x.y.z', type: 'pattern' }]);
}

/** Throws `invalid file name: "<name>"` (422) unless `filename` passes the allow-list; `where` is the error's loc. */
export function checkFileName(filename: string, where: (string | number)[] = ['body', 'files']): void {
  if (!isReleaseFileName(filename)) {
    throw new Validation(`invalid file name: ${quoted(filename)}`, [
      { loc: where, msg: 'must be a *.whl or *.tgz name of letters, digits, . _ + -', type: 'pattern' },
    ]);
  }
}

/** Strict numeric comparison of two valid versions: negative when `a` is older. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return pa[i] - pb[i];
  return 0;
}

/** Whether an agent reporting `current` should update to `target`: only upgrades, and only from a version we can read. */
export function needsUpdate(current: string | null, target: string): boolean {
  return current !== null && isVersion(current) && compareVersions(current, target) < 0;
}

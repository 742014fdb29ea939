import { posix } from 'node:path';
import { RenderError } from './types.js';

/** Text for a `#` comment: control characters (a newline would end the comment) become spaces. */
export const safeComment = (text: string): string => text.replace(/[\x00-\x1f\x7f]/g, ' ');

/**
 * A double-quoted string for BIRD and BIND. Both read `\` as an escape, and a
 * path with a quote or a control character is no path an agent should write,
 * so those are refused rather than escaped.
 */
export function quoted(text: string, what: string): string {
  if (/["\\\x00-\x1f\x7f]/.test(text)) throw new RenderError(`invalid ${what}: quotes, backslashes and control characters are not allowed`);
  return `"${text}"`;
}

/** A file under the rendered dir as a quoted absolute path (BIRD includes, BIND zone files). */
export function renderedPath(renderedDir: string, file: string): string {
  if (!posix.isAbsolute(renderedDir)) throw new RenderError(`invalid rendered dir '${renderedDir}': must be absolute`);
  return quoted(posix.join(renderedDir, file), 'rendered dir');
}

/** Longest `next` kept; a longer one is discarded like a foreign one. */
export const MAX_NEXT_LENGTH = 2048;

/**
 * The `next` of a login, kept only when it is a site-relative path (`/x`):
 * absolute URLs, protocol-relative ones (`//host`, `/\host`, which browsers read
 * as `//host`), backslashes and control characters anywhere are discarded, so the
 * portal can never be made to send a user elsewhere after the login.
 */
export function siteRelativeNext(next: unknown): string | null {
  if (typeof next !== 'string' || next.length > MAX_NEXT_LENGTH) return null;
  if (!next.startsWith('/') || next.startsWith('//')) return null;
  if (/[\\\u0000-\u001f\u007f]/.test(next)) return null;
  return next;
}

import type { Logger } from '../logger.js';

/**
 * A public OpenPGP key server spoken to over HKP (`/pks/lookup`, which VKS servers
 * such as keys.openpgp.org answer too). It is a convenience source, never an
 * authority: the caller checks the fingerprint of whatever comes back, and any
 * failure (unreachable, slow, refused, too big) is a miss, logged and skipped.
 */

export const KEYSERVER_TIMEOUT_MS = 4000;
/** Keys with many certifications get large; anything bigger than this is not one public key. */
const MAX_BYTES = 2 * 1024 * 1024;

/** `hkps://host` is `https://host`, `hkp://host` is `http://host:11371` (the HKP port) unless a port is given. */
export function keyserverBase(configured: string): URL {
  const url = new URL(configured);
  if (url.protocol === 'hkps:') return new URL(`https://${url.host}${url.pathname}`);
  if (url.protocol === 'hkp:') return new URL(`http://${url.hostname}:${url.port || '11371'}${url.pathname}`);
  return url;
}

/** The armored key block the server holds for `fingerprint` (40 hex), or null on any miss. */
export async function fetchFromKeyserver(configured: string, fingerprint: string, log: Logger, timeoutMs = KEYSERVER_TIMEOUT_MS): Promise<string | null> {
  const url = new URL('pks/lookup', withSlash(keyserverBase(configured)));
  url.search = new URLSearchParams({ op: 'get', options: 'mr', search: `0x${fingerprint}` }).toString();
  try {
    const res = await fetch(url, { headers: { accept: 'application/pgp-keys' }, signal: AbortSignal.timeout(timeoutMs), redirect: 'follow' });
    if (!res.ok) {
      if (res.status !== 404) log.warn({ url: url.href, status: res.status }, 'key server refused a lookup');
      await res.body?.cancel();
      return null;
    }
    const body = await readCapped(res, MAX_BYTES);
    if (body === null) log.warn({ url: url.href }, `key server answer larger than ${MAX_BYTES} bytes; skipped`);
    return body;
  } catch (err) {
    log.warn({ err, url: url.href }, 'key server unreachable; skipped');
    return null;
  }
}

/** The body as text, or null once it passes `limit` bytes. */
async function readCapped(res: Response, limit: number): Promise<string | null> {
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of res.body) {
    total += chunk.byteLength;
    if (total > limit) return null; // leaving the loop cancels the stream
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function withSlash(url: URL): URL {
  return url.pathname.endsWith('/') ? url : new URL(`${url.href}/`);
}

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import express, { Router, type Response } from 'express';
import { Unavailable } from '../../domain/errors.js';
import { REFERENCE_ASSET_DIR_NAME, REFERENCE_ASSET_PATH, REFERENCE_BUILD_DIR, REFERENCE_PATH } from '../../web/files.js';

export const REFERENCE_NOT_BUILT = 'the API reference page is not built (run npm run build:reference)';

/**
 * The headers of the reference page. Scripts, the document and the search worker
 * come from this origin only (the worker is a `blob:` Redoc makes from its own
 * bundle); styles may be inline because Redoc's styled-components writes them at
 * run time. Nothing is framed, sent elsewhere or submitted.
 */
export const REFERENCE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'Cache-Control': 'no-cache',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/**
 * `GET <prefix>/docs`: the service's API reference (Redoc, bundled by
 * `npm run build:reference`), which reads `<prefix>/openapi.json` beside it; its
 * assets under `<prefix>/docs/` by content-hashed name, cached for a year. The
 * page holds no data, so it needs no credential. A missing build answers 503
 * in the service's error style.
 */
export function referenceRoutes(prefix: string, dir = REFERENCE_BUILD_DIR): Router {
  const router = Router({ strict: true });
  const index = join(dir, 'index.html');
  const page = `${prefix}${REFERENCE_PATH}`;
  // The page refers to its assets and the document relatively: `/docs/` would resolve them one level too deep.
  router.get(`${page}/`, (_req, res) => res.redirect(301, page));
  router.get(page, (_req, res: Response, next) => {
    if (!existsSync(index)) return next(new Unavailable(REFERENCE_NOT_BUILT));
    res.set(REFERENCE_HEADERS);
    // `root`: the dot-directory (.build) is then not part of the path that send checks for dotfiles.
    res.sendFile(
      'index.html',
      { root: dir, headers: { 'Content-Type': 'text/html; charset=utf-8' }, cacheControl: false, lastModified: false, etag: false },
      (err) => err && next(err),
    );
  });
  router.use(
    `${prefix}${REFERENCE_ASSET_PATH}`,
    express.static(join(dir, REFERENCE_ASSET_DIR_NAME), {
      index: false,
      redirect: false,
      dotfiles: 'ignore',
      immutable: true,
      maxAge: '365d',
      setHeaders: (res) => {
        res.setHeader('X-Content-Type-Options', 'nosniff');
        res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
      },
    }),
  );
  return router;
}

import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import express, { Router, type Response } from 'express';
import { APPS, LAND_FILE, notBuilt, WEB_BUILD_DIR, type AppName } from '../../web/files.js';
import { HttpError } from '../shared/errors.js';

/**
 * The headers of the console and portal pages: everything same-origin, no
 * framing, no referrer. Style attributes are allowed (the chart library and
 * Svelte's `style:` set them); style sheets and scripts only from the app.
 */
export const APP_HEADERS: Record<string, string> = {
  'Content-Security-Policy': [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; '),
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=()',
};

/**
 * `/console/` and `/portal/`: the single-page apps of `npm run build:web`. Any
 * path below an app answers its `index.html` (the app routes in the browser),
 * with `<base href>` set to the app's path so its relative asset names resolve
 * from deep links; assets are content-hashed and cached for a year. A missing
 * build answers 503.
 */
export function appPageRoutes(dir = WEB_BUILD_DIR): Router {
  const router = Router({ strict: true });
  for (const [app, path] of Object.entries(APPS) as [AppName, string][]) {
    const root = join(dir, app);
    const index = indexOf(root, path);
    router.get(path, (req, res) => res.redirect(301, `${path}/${req.url.slice(path.length)}`));
    router.use(
      `${path}/assets`,
      express.static(join(root, 'assets'), {
        index: false,
        redirect: false,
        dotfiles: 'ignore',
        immutable: true,
        maxAge: '365d',
        setHeaders: (res) => res.setHeader('X-Content-Type-Options', 'nosniff'),
      }),
    );
    router.use(`${path}/assets`, (_req, _res, next) => next(new HttpError(404, 'no such asset')));
    router.get(`${path}/${LAND_FILE}`, (_req, res: Response, next) => {
      res.sendFile(
        LAND_FILE,
        { root, maxAge: '1d', headers: { 'X-Content-Type-Options': 'nosniff' } },
        (err) => err && next(new HttpError(503, notBuilt(app))),
      );
    });
    router.get(new RegExp(`^${path}/`), async (_req, res, next) => {
      try {
        const html = await index();
        if (html === null) return next(new HttpError(503, notBuilt(app)));
        res.set(APP_HEADERS).type('html').send(html);
      } catch (err) {
        next(err);
      }
    });
  }
  return router;
}

/** The app's `index.html` with its `<base href>`, read again only when the build changed. */
function indexOf(root: string, path: string): () => Promise<string | null> {
  let cached: { mtime: number; html: string } | undefined;
  return async () => {
    const file = join(root, 'index.html');
    const mtime = await stat(file).then(
      (s) => s.mtimeMs,
      () => null,
    );
    if (mtime === null) return null;
    if (cached?.mtime !== mtime) {
      const html = await readFile(file, 'utf8');
      cached = { mtime, html: html.replace('<head>', `<head>\n    <base href="${path}/" />`) };
    }
    return cached.html;
  };
}

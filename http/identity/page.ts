import { existsSync } from 'node:fs';
import { join } from 'node:path';
import express, { Router, type Response } from 'express';
import type { Config } from '../../infra/config.js';
import { identityError } from './errors.js';
import { AUTHORIZE_ASSET_DIR_NAME, AUTHORIZE_ASSET_PATH, AUTHORIZE_BUILD_DIR, AUTHORIZE_PATH } from '../../web/files.js';

export const PAGE_NOT_BUILT = 'the authorization page is not built (run npm run build:page)';

/**
 * The headers of the page. Everything is same-origin (`'self'`), nothing inline;
 * no framing (clickjacking the consent buttons), no referrer (the query carries
 * `state` and the PKCE challenge). An external captcha widget's origin is
 * allowed for its script and frame only when that captcha is configured.
 */
export function pageHeaders(config: Pick<Config, 'captchaKind' | 'captchaWidgetUrl'>): Record<string, string> {
  const widget = config.captchaKind === 'external' && config.captchaWidgetUrl ? ` ${new URL(config.captchaWidgetUrl).origin}` : '';
  const csp = [
    "default-src 'self'",
    `script-src 'self'${widget}`,
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src 'self'${widget}`,
    `frame-src${widget || " 'none'"}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return {
    'Content-Security-Policy': csp,
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Permissions-Policy': 'publickey-credentials-get=(self), publickey-credentials-create=(self), camera=(), microphone=(), geolocation=()',
  };
}

/**
 * `GET /authorize`: the authorization page (static `index.html` of the build),
 * never cached, and its assets under `/authorize-page/` (content-hashed names,
 * cached for a year). The service renders nothing: the page reads the query
 * itself and talks to the JSON API. A missing build answers 503.
 */
export function pageRoutes(config: Config, dir = AUTHORIZE_BUILD_DIR): Router {
  const router = Router({ strict: true });
  const headers = pageHeaders(config);
  const index = join(dir, 'index.html');
  router.get(AUTHORIZE_PATH, (_req, res: Response, next) => {
    if (!existsSync(index)) return next(identityError(503, PAGE_NOT_BUILT));
    res.set(headers);
    // `root`: the dot-directory (.build) is then not part of the path that send checks for dotfiles.
    res.sendFile(
      'index.html',
      { root: dir, headers: { 'Content-Type': 'text/html; charset=utf-8' }, cacheControl: false, lastModified: false, etag: false },
      (err) => err && next(err),
    );
  });
  router.use(
    AUTHORIZE_ASSET_PATH,
    express.static(join(dir, AUTHORIZE_ASSET_DIR_NAME), {
      index: false,
      redirect: false,
      dotfiles: 'ignore',
      immutable: true,
      maxAge: '365d',
      setHeaders: (res) => res.setHeader('X-Content-Type-Options', 'nosniff'),
    }),
  );
  return router;
}

import express, { type Express } from 'express';
import type { Logger } from '../../infra/logger.js';

const PLACEHOLDER = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>dn42 network</title></head>
<body><main><h1>dn42 network</h1><p>The public map arrives here soon.</p></main></body>
</html>
`;

/**
 * The static home site. Only GET and HEAD are handled (others 405); unknown paths
 * go to `/` with 302, so it has no `/healthz`: it is ready when `/` answers 200.
 */
export function createSiteApp(_log: Logger): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use((req, res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD') return next();
    res.setHeader('Allow', 'GET, HEAD');
    res.status(405).type('text/plain').send('method not allowed\n');
  });
  app.get('/', (_req, res) => {
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.type('html').send(PLACEHOLDER);
  });
  app.use((_req, res) => {
    res.redirect(302, '/');
  });
  return app;
}

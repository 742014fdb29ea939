import type { RequestHandler } from 'express';

/**
 * Cross-origin reads of `/control/v1/public/*` (document 3: the home site may
 * live on another origin). Anonymous data, so any origin may read it, never
 * with credentials; a preflight gets GET and HEAD for a day. The answers
 * themselves do not change.
 */
export function publicCors(): RequestHandler {
  return (req, res, next) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    if (req.method !== 'OPTIONS') return next();
    res.setHeader('Access-Control-Allow-Methods', 'GET, HEAD');
    const asked = req.headers['access-control-request-headers'];
    if (asked) res.setHeader('Access-Control-Allow-Headers', asked);
    res.setHeader('Access-Control-Max-Age', '86400');
    res.status(204).end();
  };
}

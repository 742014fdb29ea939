import type { RequestHandler } from 'express';
import type { Queryable } from '../../infra/db/pool.js';

const TIMEOUT_MS = 2000;

/** `GET /healthz`: a trivial query; database down or slow → 503. */
export function healthz(db: Queryable): RequestHandler {
  return async (_req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        db.query('SELECT 1'),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('timeout')), TIMEOUT_MS);
        }),
      ]);
      res.json({ status: 'ok', database: 'up' });
    } catch {
      res.status(503).json({ status: 'unavailable', database: 'down' });
    } finally {
      clearTimeout(timer);
    }
  };
}

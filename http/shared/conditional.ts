import type { Request, Response } from 'express';

/**
 * Conditional GET by entity tag: sets `ETag` and answers 304 (no body) when the
 * request's `If-None-Match` names it (weak comparison, RFC 9110 13.1.2) or is
 * `*`. True when it answered; the caller then sends nothing.
 */
export function answeredNotModified(req: Request, res: Response, etag: string): boolean {
  res.setHeader('ETag', etag);
  const header = req.headers['if-none-match'];
  if (!header) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  const wanted = opaque(etag);
  if (!header.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === wanted)) return false;
  res.status(304).end();
  return true;
}

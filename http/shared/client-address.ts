import type { Request } from 'express';

/** The edge proxy's connecting-client header (the de-facto standard one). */
export const EDGE_CLIENT_HEADER = 'cf-connecting-ip';

/**
 * The client's address: the edge proxy's connecting-client header, then the first
 * `X-Forwarded-For` hop, then the TCP peer.
 */
export function clientAddress(req: Request): string {
  const edge = req.headers[EDGE_CLIENT_HEADER];
  if (typeof edge === 'string' && edge.trim()) return edge.trim();
  const forwarded = req.headers['x-forwarded-for'];
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim();
  if (first) return first;
  return req.socket.remoteAddress ?? 'unknown';
}

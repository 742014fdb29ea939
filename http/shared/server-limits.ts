import type { Server } from 'node:http';

/**
 * Time and connection limits of every service's HTTP server (Node's defaults hold
 * a slow request body for 300 s and accept connections without bound).
 */
export const SERVER_LIMITS = {
  /** Headers must arrive within 10 s (slowloris). */
  headersTimeoutMs: 10_000,
  /** A whole request, body included, within 60 s: the largest body (an 8 MiB routing table) needs about 1 Mbit/s. */
  requestTimeoutMs: 60_000,
  /** Idle keep-alive connections close after 5 s. */
  keepAliveTimeoutMs: 5_000,
  /** Open connections per server: agents hold one WebSocket each, so room for a few thousand nodes and their operators. */
  maxConnections: 4096,
} as const;

export function limitServer(server: Server): Server {
  server.headersTimeout = SERVER_LIMITS.headersTimeoutMs;
  server.requestTimeout = SERVER_LIMITS.requestTimeoutMs;
  server.keepAliveTimeout = SERVER_LIMITS.keepAliveTimeoutMs;
  server.maxConnections = SERVER_LIMITS.maxConnections;
  return server;
}

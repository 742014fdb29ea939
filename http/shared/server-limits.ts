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
  /**
   * Open connections per server. Each agent holds one WebSocket and, on a
   * doorbell, opens a second connection for its pull (a keep-alive connection
   * has long timed out between doorbells): room for 10,000 nodes and their
   * operators. The process's descriptor limit must allow it (the systemd unit
   * sets LimitNOFILE).
   */
  maxConnections: 25_000,
  /**
   * Pending connections the kernel queues before `accept` (Node's default is
   * 511; the kernel caps it at net.core.somaxconn, 4096 on current kernels).
   * After a fleet-wide write every agent connects at once to pull; a full queue
   * drops SYNs, and a dropped SYN is retried after 1 s, then 3 s, 7 s: the
   * fan-out's tail (bench/README.md, `fanout`).
   */
  listenBacklog: 4096,
} as const;

/** The options of `server.listen` with the backlog above. */
export function listenOptions(port: number, host: string): { port: number; host: string; backlog: number } {
  return { port, host, backlog: SERVER_LIMITS.listenBacklog };
}

export function limitServer(server: Server): Server {
  server.headersTimeout = SERVER_LIMITS.headersTimeoutMs;
  server.requestTimeout = SERVER_LIMITS.requestTimeoutMs;
  server.keepAliveTimeout = SERVER_LIMITS.keepAliveTimeoutMs;
  server.maxConnections = SERVER_LIMITS.maxConnections;
  return server;
}

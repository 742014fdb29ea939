import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Express } from 'express';
import { WebSocketServer, type WebSocket } from 'ws';
import { AgentHub, fanOut } from '../../infra/agent-hub/hub.js';
import { Presence } from '../../infra/agent-hub/presence.js';
import { PgDoorbell } from '../../infra/doorbell.js';
import type { ServiceContext } from '../shared/context.js';
import { invalidTokens, TOKEN_REVOKED_CHANNEL } from '../../infra/agent-hub/revocations.js';
import { resolveAgentGrant, type AgentPrincipal } from './agent/auth.js';
import { acceptJobStream } from './agent/job-streams.js';
import { acceptAgentChannel } from './agent/ws.js';
import type { AgentMetrics } from '../../infra/metrics/agents.js';

/** Close code for an unresolvable agent token (document 2, Authentication). */
export const CLOSE_UNAUTHORIZED = 4401;

/** The WebSocket paths of the control server; the id is one path segment. */
const SOCKET_PATH = /^\/control\/v1\/agent\/(ws|probe-stream|log-stream)\/([^/]{1,200})$/;

/** Frames larger than this close the connection (1009); log batches are the largest upstream frames. */
const MAX_FRAME_BYTES = 1024 * 1024;

/** Pings find connections whose peer vanished without a close (their presence rows would linger). */
const PING_INTERVAL_MS = 30_000;

/** How long closing waits for agents to answer the close frame before cutting them off. */
const CLOSE_GRACE_MS = 1_000;

/** Re-checks the tokens of open sockets: revocations whose announcement was lost take effect within this. */
const TOKEN_CHECK_INTERVAL_MS = 30_000;

/** An expiry timer wakes at least this far apart (the service clock may stand still in tests). */
const EXPIRY_RECHECK_MIN_MS = 250;
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface ControlSockets {
  hub: AgentHub;
  /** Closes (4401) this instance's sockets whose token no longer resolves; answers how many. Runs every 30 s. */
  checkTokens(): Promise<number>;
  /** Closes every socket (1001), removes this instance's presence, unplugs the hub from the doorbell. */
  close(): Promise<void>;
}

/**
 * Attaches the agent WebSockets to the control HTTP server: upgrade handling,
 * token resolution from the handshake's `Authorization` header only (never the
 * query), the agent hub (plugged into the doorbell next to what was there) and
 * this instance's presence.
 */
export async function attachControlSockets(server: Server, ctx: ServiceContext, metrics?: AgentMetrics): Promise<ControlSockets> {
  const doorbell = ctx.doorbell instanceof PgDoorbell ? ctx.doorbell : undefined;
  // The doorbell's origin names this instance in presence rows, so that it can count the others' agents.
  const presence = new Presence(ctx.pool, doorbell?.origin ?? randomUUID(), ctx.log);
  await presence.start();
  const hub = new AgentHub(presence, ctx.log);
  // Counted on its way to the hub: what the doorbell sends to this instance's agents.
  const watched = metrics?.watch(hub);
  const previous = doorbell?.currentBroadcaster();
  if (doorbell && previous) doorbell.setBroadcaster(fanOut(previous, watched?.broadcaster ?? hub));

  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES, perMessageDeflate: false });
  const alive = new WeakMap<WebSocket, boolean>();
  wss.on('connection', (ws) => {
    alive.set(ws, true);
    ws.on('pong', () => alive.set(ws, true));
    ws.on('error', (err) => ctx.log.debug({ err }, 'agent socket error'));
  });

  // The token of each open socket (every kind): a revoked, rotated or expired token closes its sockets with 4401.
  const grants = new Map<WebSocket, { token_id: string; expiry?: NodeJS.Timeout }>();
  const refuse = (ws: WebSocket, reason: string) => {
    if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(CLOSE_UNAUTHORIZED, reason);
  };
  const closeToken = (tokenIds: ReadonlySet<string>, reason: string): number => {
    let n = 0;
    for (const [ws, grant] of grants) {
      if (!tokenIds.has(grant.token_id)) continue;
      refuse(ws, reason);
      n++;
    }
    return n;
  };
  const checkTokens = async (): Promise<number> => {
    const ids = new Set([...grants.values()].map((g) => g.token_id));
    return closeToken(new Set(await invalidTokens(ctx.pool, [...ids], ctx.now())), 'token revoked or expired');
  };
  /** Wakes at the token's expiry by the service clock (re-armed while that clock has not reached it). */
  const watchExpiry = (ws: WebSocket, grant: { expiry?: NodeJS.Timeout }, expiresAt: Date) => {
    const remaining = expiresAt.getTime() - ctx.now().getTime();
    if (remaining <= 0) return refuse(ws, 'token expired');
    grant.expiry = setTimeout(() => watchExpiry(ws, grant, expiresAt), Math.min(Math.max(remaining, EXPIRY_RECHECK_MIN_MS), MAX_TIMER_MS));
    grant.expiry.unref();
  };
  const track = (ws: WebSocket, tokenId: string, expiresAt: Date | null) => {
    const grant: { token_id: string; expiry?: NodeJS.Timeout } = { token_id: tokenId };
    grants.set(ws, grant);
    ws.once('close', () => {
      clearTimeout(grant.expiry);
      grants.delete(ws);
    });
    if (expiresAt) watchExpiry(ws, grant, expiresAt);
  };
  const onRevoked = (channel: string, tokenId: string) => {
    if (channel === TOKEN_REVOKED_CHANNEL) closeToken(new Set([tokenId]), 'token revoked');
  };
  // After a gap in LISTEN, announcements may have been missed.
  const onReconnected = () => void checkTokens().catch((err) => ctx.log.error({ err }, 'agent token check failed'));
  const listener = doorbell?.listener;
  if (listener) {
    listener.on('notification', onRevoked);
    listener.on('reconnected', onReconnected);
    await listener.listen(TOKEN_REVOKED_CHANNEL);
  }
  const tokenChecker = setInterval(onReconnected, TOKEN_CHECK_INTERVAL_MS);
  tokenChecker.unref();

  const pinger = setInterval(() => {
    for (const ws of wss.clients) {
      if (!alive.get(ws)) ws.terminate();
      else {
        alive.set(ws, false);
        ws.ping();
      }
    }
  }, PING_INTERVAL_MS);
  pinger.unref();

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', (err) => ctx.log.debug({ err }, 'upgrade socket error'));
    const match = SOCKET_PATH.exec(new URL(req.url ?? '/', 'http://control').pathname);
    if (!match) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const kind = match[1] as 'ws' | 'probe-stream' | 'log-stream';
    let id: string;
    try {
      id = decodeURIComponent(match[2]);
    } catch {
      socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    resolveAgentGrant(ctx, req.headers.authorization)
      .then((grant) =>
        wss.handleUpgrade(req, socket, head, (ws) => {
          wss.emit('connection', ws, req);
          // The upgrade completes first so that the refusal can carry its close code.
          if (!grant) ws.close(CLOSE_UNAUTHORIZED, 'unauthorized');
          else {
            // Race: a revocation announced between the resolution and here is caught by the periodic check.
            track(ws, grant.agent.token_id, grant.expires_at);
            accept(kind, id, grant.agent, ws);
          }
        }),
      )
      .catch((err) => {
        ctx.log.error({ err, path: req.url }, 'agent socket handshake failed');
        socket.end('HTTP/1.1 500 Internal Server Error\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      });
  };

  const accept = (kind: 'ws' | 'probe-stream' | 'log-stream', id: string, agent: AgentPrincipal, ws: WebSocket) => {
    const work = kind === 'ws' ? acceptAgentChannel(ctx, hub, id, agent, ws) : acceptJobStream(ctx, kind === 'probe-stream' ? 'probe' : 'log', id, agent, ws);
    work.catch((err) => {
      ctx.log.error({ err, kind, id, node_id: agent.node_id }, 'agent socket failed');
      ws.close(1011, 'internal error');
    });
  };

  server.on('upgrade', onUpgrade);
  return {
    hub,
    checkTokens,
    async close() {
      server.off('upgrade', onUpgrade);
      clearInterval(pinger);
      clearInterval(tokenChecker);
      listener?.off('notification', onRevoked);
      listener?.off('reconnected', onReconnected);
      if (doorbell && previous) doorbell.setBroadcaster(previous);
      const clients = [...wss.clients];
      await Promise.all(
        clients.map(
          (ws) =>
            new Promise<void>((resolve) => {
              if (ws.readyState === ws.CLOSED) return resolve();
              const cut = setTimeout(() => ws.terminate(), CLOSE_GRACE_MS);
              ws.once('close', () => {
                clearTimeout(cut);
                resolve();
              });
              ws.close(1001, 'server shutting down');
            }),
        ),
      );
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      watched?.unwatch();
      await presence.stop();
    },
  };
}

/** Control apps and the context their sockets are served from (see `socketsOf`). */
const socketContexts = new WeakMap<Express, { ctx: ServiceContext; metrics?: AgentMetrics }>();

/** Marks an app as the control server, whose HTTP server gets the agent sockets (counted in `metrics`). */
export function withSockets(app: Express, ctx: ServiceContext, metrics?: AgentMetrics): Express {
  socketContexts.set(app, { ctx, metrics });
  return app;
}

/**
 * Attaches the sockets of a control app to its listening server; undefined for
 * other apps. The composition root and the test support call it after `listen`.
 */
export function socketsOf(app: Express, server: Server): Promise<ControlSockets> | undefined {
  const of = socketContexts.get(app);
  return of ? attachControlSockets(server, of.ctx, of.metrics) : undefined;
}

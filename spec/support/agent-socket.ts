import type pg from 'pg';
import { WebSocket } from 'ws';
import { createControlApp } from '../../http/control/app.js';
import type { ControlSockets } from '../../http/control/sockets.js';
import { api } from './http.js';
import { createTestSystem, startApp, type TestSystem } from './system.js';
import { barrier, eventually, within } from './wait.js';

/** A real `ws` client on an agent socket that records what it receives, for specs. */
export interface AgentClient {
  ws: WebSocket;
  /** Every JSON message received, in order. */
  messages: Record<string, any>[];
  /** Resolves with the next message (of that type, or matching) not yet taken, or rejects after `timeoutMs`. */
  next(type?: string | ((message: Record<string, any>) => boolean), timeoutMs?: number): Promise<Record<string, any>>;
  /** Resolves once the server closed the connection. */
  closed: Promise<{ code: number; reason: string }>;
  send(message: unknown): void;
  close(): Promise<void>;
}

/**
 * Opens `WS {base}/control/v1/agent/{path}` (path like `ws/<node>`) with the token
 * in the handshake's Authorization header (or none).
 */
export function agentSocket(baseUrl: string, path: string, token?: string, headers: Record<string, string> = {}): AgentClient {
  const url = `${baseUrl.replace(/^http/, 'ws')}/control/v1/agent/${path}`;
  const ws = new WebSocket(url, { headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) } });
  const messages: Record<string, any>[] = [];
  const taken = new Set<number>();
  const waiters: (() => void)[] = [];
  ws.on('message', (data) => {
    messages.push(JSON.parse(data.toString()));
    for (const w of waiters.splice(0)) w();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  ws.on('error', () => {});
  const find = (type?: string | ((message: Record<string, any>) => boolean)) =>
    messages.findIndex((m, i) => !taken.has(i) && (type === undefined || (typeof type === 'function' ? type(m) : m.type === type)));
  return {
    ws,
    messages,
    closed,
    next(type, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        // The bound of the wait.
        const timer = setTimeout(
          () =>
            reject(
              new Error(`no ${typeof type === 'function' ? 'matching message' : (type ?? 'message')} within ${timeoutMs} ms; got ${JSON.stringify(messages)}`),
            ),
          timeoutMs,
        );
        const check = () => {
          const i = find(type);
          if (i >= 0) {
            taken.add(i);
            clearTimeout(timer);
            resolve(messages[i]);
          } else waiters.push(check);
        };
        check();
      });
    },
    send(message) {
      ws.send(JSON.stringify(message));
    },
    async close() {
      if (ws.readyState === ws.CLOSED) return;
      ws.close();
      await closed;
    },
  };
}

/** Closes the client and waits until the server's hub has let go of it and its presence row is gone. */
export async function disconnect(instance: ControlInstance, client: AgentClient, nodeId: string): Promise<void> {
  const before = instance.sockets.hub.connectionCount(nodeId);
  const rows = async () => (await instance.sys.pool.query(`SELECT count(*)::int AS n FROM agent_connections WHERE node_id = $1`, [nodeId])).rows[0].n as number;
  const rowsBefore = await rows();
  await client.close();
  await eventually(() => instance.sockets.hub.connectionCount(nodeId) < before);
  await eventually(async () => (await rows()) < rowsBefore);
}

/** Upstream barrier: the server answers a ping once it has read every frame the client sent before it (one socket keeps its order). */
export async function pong(client: AgentClient): Promise<void> {
  const answered = new Promise<void>((resolve) => client.ws.once('pong', () => resolve()));
  client.ws.ping();
  await within(answered, 5000, 'pong');
}

/**
 * Waits until no query of the pool is running or waiting: every chain of
 * queries started before has ended (a handler goes from one query to the next
 * within one turn of the event loop, so a poll between turns never finds it
 * idle halfway).
 */
export async function poolQuiet(pool: pg.Pool): Promise<void> {
  await eventually(() => pool.waitingCount === 0 && pool.idleCount === pool.totalCount, { what: 'a quiet pool' });
}

let barriers = 0;
const isBarrier = (m: Record<string, any>) => m.type === 'snapshot_request' && typeof m.reason === 'string' && m.reason.startsWith('spec barrier ');

/**
 * Downstream barrier: rings a `snapshot_request` to the node through `POST
 * /admin/nodes/{id}/notify` and waits until the client has it. Everything handed
 * to the node's sockets before the ring arrived before it (one socket keeps its
 * order). Answers the messages received before it (earlier barriers left out).
 */
export async function ringBarrier(instance: ControlInstance, client: AgentClient, nodeId: string): Promise<Record<string, any>[]> {
  const reason = `spec barrier ${++barriers}`;
  const mark = await barrier(
    async () => {
      const rung = await instance.admin.post(`/admin/nodes/${nodeId}/notify`, { event: 'snapshot_request', reason });
      if (rung.status !== 200) throw new Error(`barrier ring answered ${rung.status}: ${rung.text}`);
    },
    () => client.next((m) => m.type === 'snapshot_request' && m.reason === reason),
  );
  return client.messages.slice(0, client.messages.indexOf(mark)).filter((m) => !isBarrier(m));
}

/**
 * Barrier for "the frames sent so far caused nothing (else)": the server has
 * read them (pong), finished handling them (its pool is quiet: a socket's
 * heartbeats are handled one after the other, each a chain of queries), and
 * whatever they rang reached the client before a later ring (ringBarrier).
 * Answers the messages received before that ring.
 */
export async function settle(instance: ControlInstance, client: AgentClient, nodeId: string): Promise<Record<string, any>[]> {
  await pong(client);
  await poolQuiet(instance.sys.pool);
  return ringBarrier(instance, client, nodeId);
}

export const ADMIN_TOKEN = 'agent-socket-spec-admin-token-0123456789';

/** One control server instance: a test system with the control app listening and its sockets attached. */
export interface ControlInstance {
  sys: TestSystem;
  url: string;
  sockets: ControlSockets;
  admin: ReturnType<typeof api>;
  close(): Promise<void>;
}

/** Starts a control instance on a fresh database, or on `of`'s database as a second instance. */
export async function startControl(of?: ControlInstance, env: Record<string, string> = {}): Promise<ControlInstance> {
  const sys = await createTestSystem({ env: { ADMIN_TOKEN, ...env }, database: of?.sys.db });
  const started = await startApp(createControlApp(sys.context));
  return {
    sys,
    url: started.url,
    sockets: started.sockets!,
    admin: api(`${started.url}/control/v1`, { token: ADMIN_TOKEN }),
    async close() {
      await started.close();
      await sys.close();
    },
  };
}

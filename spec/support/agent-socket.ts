import { WebSocket } from 'ws';
import { createControlApp } from '../../http/control/app.js';
import type { ControlSockets } from '../../http/control/sockets.js';
import { api } from './http.js';
import { createTestSystem, startApp, type TestSystem } from './system.js';

/** A real `ws` client on an agent socket that records what it receives, for specs. */
export interface AgentClient {
  ws: WebSocket;
  /** Every JSON message received, in order. */
  messages: Record<string, any>[];
  /** Resolves with the next message (of that type) not yet taken, or rejects after `timeoutMs`. */
  next(type?: string, timeoutMs?: number): Promise<Record<string, any>>;
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
  const find = (type?: string) => messages.findIndex((m, i) => !taken.has(i) && (type === undefined || m.type === type));
  return {
    ws,
    messages,
    closed,
    next(type, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${type ?? 'message'} within ${timeoutMs} ms; got ${JSON.stringify(messages)}`)), timeoutMs);
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

/** Polls until `check` holds (a closed agent leaves the hub when the server sees the close). */
export async function eventually(check: () => Promise<boolean> | boolean, timeoutMs = 3000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Closes the client and waits until the server's hub has let go of it and its presence row is gone. */
export async function disconnect(instance: ControlInstance, client: AgentClient, nodeId: string): Promise<void> {
  const before = instance.sockets.hub.connectionCount(nodeId);
  const rows = async () =>
    (await instance.sys.pool.query(`SELECT count(*)::int AS n FROM agent_connections WHERE node_id = $1`, [nodeId])).rows[0].n as number;
  const rowsBefore = await rows();
  await client.close();
  await eventually(() => instance.sockets.hub.connectionCount(nodeId) < before);
  await eventually(async () => (await rows()) < rowsBefore);
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

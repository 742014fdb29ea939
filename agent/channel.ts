import { WebSocket, type RawData } from 'ws';
import { agentWsUrl } from './http.js';
import type { AgentRuntime } from './runtime.js';

/** The doorbells of `WS /agent/ws/{node_id}` (contract, "Events"). */
export type DoorbellEvent =
  | { type: 'hello'; node_id: string; generation?: number }
  | { type: 'desired_state_updated'; generation: number; reason?: string }
  | { type: 'snapshot_request'; reason?: string }
  | { type: 'agent_update_available'; version: string; wheels?: unknown[]; reason?: string }
  | { type: 'probe_request'; probe_id: string; spec: unknown }
  | { type: 'log_request'; log_id: string; spec: unknown };

/**
 * The server pings every 30 s; a connection that has heard nothing for this
 * long lost its peer without a close (a crashed host, a dropped route) and is
 * cut so that the reconnect loop takes over.
 */
export const SILENCE_LIMIT_MS = 90_000;

const str = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

/** A doorbell with the fields its type needs, else undefined (unknown types and broken frames are ignored). */
export function parseEvent(data: RawData): DoorbellEvent | undefined {
  let m: Record<string, unknown>;
  try {
    m = JSON.parse(data.toString());
  } catch {
    return undefined;
  }
  if (typeof m !== 'object' || m === null) return undefined;
  switch (m.type) {
    case 'hello':
      return { type: 'hello', node_id: String(m.node_id ?? ''), ...(Number.isSafeInteger(m.generation) ? { generation: m.generation as number } : {}) };
    case 'desired_state_updated':
      return Number.isSafeInteger(m.generation) ? (m as DoorbellEvent) : undefined;
    case 'snapshot_request':
      return m as DoorbellEvent;
    case 'agent_update_available':
      return str(m.version) ? (m as DoorbellEvent) : undefined;
    case 'probe_request':
      return str(m.probe_id) ? (m as DoorbellEvent) : undefined;
    case 'log_request':
      return str(m.log_id) ? (m as DoorbellEvent) : undefined;
    default:
      return undefined;
  }
}

/** One connection of the agent's private channel, from handshake to close. */
export class AgentChannel {
  private ws: WebSocket | null = null;

  constructor(
    private readonly rt: AgentRuntime,
    private readonly handlers: { onOpen(): void; onEvent(event: DoorbellEvent): void },
  ) {}

  /** Connects (`Authorization: Bearer`, never in the query) and resolves with the close code once the connection ends. */
  run(signal: AbortSignal): Promise<{ code: number; reason: string }> {
    const log = this.rt.logger;
    const ws = new WebSocket(agentWsUrl(this.rt, `/agent/ws/${encodeURIComponent(this.rt.nodeId)}`), {
      headers: { authorization: `Bearer ${this.rt.agentToken()}` },
      handshakeTimeout: 15_000,
    });
    this.ws = ws;
    let heard = Date.now();
    const watchdog = setInterval(() => {
      if (Date.now() - heard > SILENCE_LIMIT_MS) ws.terminate();
    }, SILENCE_LIMIT_MS / 6);
    const onAbort = () => ws.close(1000, 'agent stopping');
    signal.addEventListener('abort', onAbort, { once: true });
    return new Promise((resolve) => {
      ws.on('open', () => {
        heard = Date.now();
        log.info('agent channel open');
        this.handlers.onOpen();
      });
      ws.on('ping', () => (heard = Date.now()));
      ws.on('message', (data) => {
        heard = Date.now();
        const event = parseEvent(data);
        if (!event) return log.debug('ignored an unknown frame on the agent channel');
        log.debug({ event: event.type }, 'doorbell');
        this.handlers.onEvent(event);
      });
      ws.on('error', (err) => log.debug({ err }, 'agent channel error'));
      ws.on('close', (code, reason) => {
        clearInterval(watchdog);
        signal.removeEventListener('abort', onAbort);
        this.ws = null;
        if (code === 4401 || code === 4403) log.error({ code }, `agent channel refused: ${reason.toString() || 'token not accepted'}`);
        resolve({ code, reason: reason.toString() });
      });
    });
  }

  /** Sends a JSON message when the socket is open; dropped otherwise (heartbeats repeat). */
  send(message: object): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message));
  }
}

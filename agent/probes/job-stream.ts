import { WebSocket } from 'ws';
import { agentWsUrl } from '../http.js';
import type { AgentRuntime } from '../runtime.js';

/** One temporary job channel (`WS /agent/probe-stream/{id}` or `/agent/log-stream/{id}`) from the agent's side. */
export interface JobStream {
  /** Sends one JSON message; dropped once the server has closed the channel. */
  send(message: Record<string, unknown>): void;
  /** Aborted when the server closes the channel (its `done`, a run timeout 4408, a refusal 4403): stop working. */
  readonly closed: AbortSignal;
  /** Sends the final message and waits (at most `waitMs`) for the server to close after storing it. */
  finish(done: Record<string, unknown>, waitMs?: number): Promise<void>;
}

/**
 * Opens a job channel with the agent token in the handshake's Authorization
 * header (never the query). Rejects when the handshake fails (4401/4403 come
 * as a close right after it, which `closed` reports).
 */
export function openJobStream(rt: AgentRuntime, path: string): Promise<JobStream> {
  const ws = new WebSocket(agentWsUrl(rt, path), { headers: { authorization: `Bearer ${rt.agentToken()}` }, handshakeTimeout: 15_000 });
  const closing = new AbortController();
  const gone = new Promise<void>((resolve) =>
    ws.on('close', (code, reason) => {
      closing.abort(new Error(`job stream closed ${code} ${reason.toString()}`));
      resolve();
    }),
  );
  return new Promise((resolve, reject) => {
    ws.once('error', reject);
    ws.once('open', () => {
      ws.off('error', reject);
      ws.on('error', (err) => rt.logger.warn({ err, path }, 'job stream error'));
      resolve({
        closed: closing.signal,
        send(message) {
          if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
        },
        async finish(done, waitMs = 5000) {
          if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(done));
          const timer = setTimeout(() => ws.terminate(), waitMs);
          await gone;
          clearTimeout(timer);
        },
      });
    });
  });
}
